"""Fixtures for reward tests: a tiny causal LM over the policy's character tokenizer (the GRPO policy, and
the base of the PRM), a tiny PRM trained from it for two steps, and a scorer whose scores are known.

Built in the test (no policy build, no download): a ~10k-parameter Llama loads in well under a second.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

TINY_CONTEXT = 160  # positions of the tiny models: a 40-step completion overflows the PRM's context


@pytest.fixture(autouse=True, scope="session")
def _one_thread():
    import torch

    torch.set_num_threads(1)  # the test machine is shared; tiny models gain nothing from more threads


@pytest.fixture(scope="session")
def tiny_lm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A randomly initialised causal LM folder (model + char tokenizer)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from prm.policy import build_char_tokenizer

    folder = tmp_path_factory.mktemp("tiny-lm")
    tokenizer = build_char_tokenizer()
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=TINY_CONTEXT,
                         tie_word_embeddings=True, bos_token_id=tokenizer.bos_token_id,
                         eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    torch.manual_seed(0)
    LlamaForCausalLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="session")
def tiny_prm(tiny_lm: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A PRM folder (token-classification head + prm_convention.json) trained for two steps from ``tiny_lm``."""
    from prm.training import PRMTrainConfig, train_prm

    rows = [{"prompt": f"{i} plus 1", "completions": ["ok", "no"][: 1 + i % 2], "labels": [True, False][: 1 + i % 2]}
            for i in range(8)]
    config = PRMTrainConfig(base_model=str(tiny_lm), max_steps=2, batch_size=8, warmup_steps=0, logging_steps=1,
                            eval_steps=10, save_steps=10)
    return train_prm(rows, tmp_path_factory.mktemp("prm") / "prm", config)


class KeywordScorer:
    """Stands in for a PRMScorer with known scores: a step containing "bad" scores 0.1, any other 0.9.

    Records every ``(problem, steps)`` it is asked to score, so a test can see what the adapter passed.
    """

    def __init__(self) -> None:
        self.seen: list[tuple[str, list[str]]] = []

    def score_batch(self, items: Sequence[tuple[str, Sequence[str]]],
                    batch_size: int | None = None) -> list[list[float]]:
        self.seen.extend((p, list(s)) for p, s in items)
        return [[0.1 if "bad" in step else 0.9 for step in steps] for _, steps in items]


@pytest.fixture
def keyword_scorer() -> KeywordScorer:
    return KeywordScorer()
