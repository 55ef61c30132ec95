"""Fixtures for RL tests: a tiny random causal LM (the policy), a tiny PRM trained from it for two steps, and
one two-step comparison of every arm, run once per session.

The models come from tests/tiny_models.py (fixture ``tiny_models``) at this directory's context, built once per session.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from prm.rl import Comparison, RLRunConfig, compare_arms
from tests.tiny_models import TinyModels

# Positions of the tiny models: a 2-operation word prompt (~60 characters) plus a 16-token completion fits
# with room; the held-out sampler's budget (1.5 x gold + 32) stays under it too.
TINY_CONTEXT = 256

# Two optimizer steps per arm on 2-operation problems: every code path of a run (data, generation, the PRM
# reward, the update, logging, evaluation before and after) in seconds.
TINY_RUN = RLRunConfig(steps=2, train_ops=(2,), anchor_ops=(1,), anchor_share=0.5, num_generations=4, batch_size=8,
                       max_completion_length=16, eval_ops=(1, 2), eval_problems=2, eval_samples=2, save_policy=False)


@pytest.fixture(autouse=True, scope="session")
def _one_thread():
    import torch

    torch.set_num_threads(1)  # the test machine is shared; tiny models gain nothing from more threads


@pytest.fixture(scope="session")
def tiny_lm(tiny_models: TinyModels) -> Path:
    """A randomly initialised causal LM folder (model + char tokenizer)."""
    return tiny_models.lm(TINY_CONTEXT)


@pytest.fixture(scope="session")
def tiny_prm(tiny_models: TinyModels) -> Path:
    """A PRM folder (token-classification head + prm_convention.json) trained for two steps from ``tiny_lm``."""
    return tiny_models.prm(TINY_CONTEXT)


@pytest.fixture(scope="session")
def comparison(tiny_lm: Path, tiny_prm: Path, tmp_path_factory: pytest.TempPathFactory) -> Comparison:
    """Every arm (including the optional PROF arm), two GRPO steps each, from the same tiny policy."""
    config = RLRunConfig(**{**TINY_RUN.to_dict(), "arms": ("outcome", "prm_min", "prm_sum", "prm_min_prof")})
    return compare_arms(tiny_lm, tiny_prm, config, tmp_path_factory.mktemp("rl"))


@pytest.fixture(scope="session")
def tiny_lm_prm(tiny_lm: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An LM-head PRM folder (implicit_prm.json, step labels) fine-tuned two steps from ``tiny_lm``: what the prime
    arm starts from. No reference floor: the random tiny LM gives every token less than any useful floor, so every
    sequence reward would start saturated."""
    from prm.training.implicit import ImplicitPRMConfig, train_implicit_prm

    rows = [(f"{i} plus 1", [f"{i} + 1 = {i + 1}", "no"][: 1 + i % 2], [True, False][: 1 + i % 2]) for i in range(8)]
    config = ImplicitPRMConfig(base_model=str(tiny_lm), labels="step", beta=0.5, max_steps=2, batch_size=4)
    return train_implicit_prm(rows, tmp_path_factory.mktemp("lm-prm") / "prm", config)
