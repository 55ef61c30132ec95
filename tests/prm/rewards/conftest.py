"""Fixtures for reward tests: a tiny causal LM over the policy's character tokenizer (the GRPO policy, and
the base of the PRM), a tiny PRM trained from it for two steps, and a scorer whose scores are known.

Both come from tests/tiny_models.py (fixture ``tiny_models``) at this directory's context, built once per session.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.tiny_models import TinyModels

TINY_CONTEXT = 160  # positions of the tiny models: a 40-step completion overflows the PRM's context


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
