"""Beam search and best-of-N through the real vLLM engine on the shipped policy, scored by a real (tiny) PRM."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from prm.format import segment
from prm.models import prompter_for
from prm.scoring import load_prm
from prm.search import BackendExpander, Expansion, SearchConfig, beam_search, best_of_n, grade
from prm.search.run import heldout_problems

pytestmark = pytest.mark.slow


class CountingExpander(BackendExpander):
    """The product expander, recording what the engine returned per prompt so the test can recount tokens."""

    def __init__(self, backend: object) -> None:
        super().__init__(backend)
        self.tokens: dict[str, int] = {}

    def __call__(self, prompts: Sequence[str], n: int, **kw: object) -> list[list[Expansion]]:
        out = super().__call__(prompts, n, **kw)
        for prompt, found in zip(prompts, out, strict=True):
            question = next(q for q in self.questions if prompt.startswith(q))
            self.tokens[question] = self.tokens.get(question, 0) + sum(e.tokens for e in found)
        return out


def test_beam_search_through_vllm_on_the_shipped_policy(vllm_backend: object, tiny_prm: Path) -> None:
    problems = heldout_problems(2, n_ops=(2,))
    questions = [p.question for p in problems]
    expander = CountingExpander(vllm_backend)
    expander.questions = questions
    prompter = prompter_for(vllm_backend.info.model)
    config = SearchConfig(n=2, m=2, max_steps=6, max_step_tokens=32)
    results = beam_search(questions, prompter, expander, load_prm(tiny_prm), config)
    for r in results:
        assert r.generated_tokens == expander.tokens[r.question] > 0
        assert r.candidates >= config.n * config.m
        assert len(segment(r.completion).steps) == len(r.scores)  # every kept step was scored
    assert len(grade(results, [p.gold_answer for p in problems])) == 2
    bon = best_of_n(questions, prompter, expander, load_prm(tiny_prm), SearchConfig(n=2, m=2, max_solution_tokens=64))
    assert all(r.candidates == 2 for r in bon)
