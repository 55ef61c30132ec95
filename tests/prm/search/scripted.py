"""Unit-test fixtures: a scripted expansion function standing in for the generator, and a scripted PRM.

Neither is a product component: the product path is ``prm.search.BackendExpander`` over a real generation
backend and ``prm.scoring.load_prm``. They make the right path known, so a test can say which one a search
must find.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from prm.format import ContextOverflowError
from prm.search import Expansion

PROMPT_SUFFIX = "\n"


def prompter(question: str) -> str:
    return question + PROMPT_SUFFIX


class ScriptedExpander:
    """``step(completion_so_far, request_index, sample_index) -> text`` for step requests (stop given),
    ``full(question, sample_index) -> text`` for full samples; a token per character. Records every call."""

    def __init__(self, step: Callable[[str, int, int], str], full: Callable[[str, int], str] | None = None) -> None:
        self.step, self.full = step, full
        self.calls: list[list[str]] = []  # prompts of every call
        self.tokens: dict[str, int] = {}  # generated tokens per question

    def __call__(self, prompts: Sequence[str], n: int, *, stop: Sequence[str], max_tokens: int,
                 temperature: float, seed: int | None) -> list[list[Expansion]]:
        self.calls.append(list(prompts))
        out = []
        for i, prompt in enumerate(prompts):
            question, _, done = prompt.partition(PROMPT_SUFFIX)
            texts = [self.step(done, i, j) if stop else self.full(question, j) for j in range(n)]
            if any(t is None for t in texts):
                out.append([])  # a failed request
                continue
            self.tokens[question] = self.tokens.get(question, 0) + sum(len(t) for t in texts)
            out.append([Expansion(t, len(t)) for t in texts])
        return out


class ScriptedPRM:
    """P(good) of a step from a table of step texts (default 0.5); raises ContextOverflowError past
    ``max_chars`` characters of steps, as the real scorer does past its context."""

    def __init__(self, table: dict[str, float], max_chars: int = 10_000) -> None:
        self.table, self.max_chars = table, max_chars
        self.batches: list[int] = []

    def score_steps(self, question: str, steps: Sequence[str]) -> list[float]:
        if sum(len(s) for s in steps) > self.max_chars:
            raise ContextOverflowError(f"{len(steps)} steps exceed {self.max_chars} characters")
        return [self.table.get(s, 0.5) for s in steps]

    def score_batch(self, items: Sequence[tuple[str, Sequence[str]]]) -> list[list[float]]:
        self.batches.append(len(items))
        return [self.score_steps(q, s) if s else [] for q, s in items]


NAN = math.nan
