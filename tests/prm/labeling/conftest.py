"""A scripted rollout oracle: deterministic outcomes per prefix, so labeler mechanics can be pinned.

Steps are words. A prefix is *alive* while none of its steps is ``"bad"``; rollout ``i`` (the i-th ever
drawn for that prefix) of an alive prefix reaches gold iff ``pattern[i % len(pattern)]``, a dead prefix
never does. ``mc_overrides`` maps a step tuple to its own pattern. Wrong rollouts continue with
``"ok\\nbad"`` so OmegaPRM has steps to search in them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest

from prm.datagen.rollouts import RolloutTarget
from prm.datagen.targets import SolutionToLabel
from prm.labeling.sampler import CachedRolloutSampler
from prm.labeling.types import RolloutOutcome

TOKENS_PER_ROLLOUT = 10


def steps_of(target: RolloutTarget) -> tuple[str, ...]:
    """The steps in a prefix built by SolutionToLabel (prompt is one line ``Q...``)."""
    return tuple(target.prefix.split("\n")[1:-1])


class Oracle:
    """Scripted outcomes; counts what was asked so tests can assert batching and reuse."""

    def __init__(self, pattern: Sequence[bool] = (True, False), mc_overrides: dict[tuple[str, ...], Sequence[bool]]
                 | None = None) -> None:
        self.pattern = tuple(pattern)
        self.overrides = dict(mc_overrides or {})
        self.drawn: Counter[str] = Counter()  # prefix_hash -> rollouts drawn so far
        self.asked: list[tuple[str, ...]] = []  # step tuples in the order estimated

    def outcome(self, target: RolloutTarget) -> RolloutOutcome:
        steps = steps_of(target)
        i = self.drawn[target.prefix_hash]
        self.drawn[target.prefix_hash] += 1
        pattern = self.overrides.get(steps, self.pattern if "bad" not in steps else (False,))
        ok = bool(pattern[i % len(pattern)])
        return RolloutOutcome("ok\nAnswer: 1" if ok else "ok\nbad\nAnswer: 0", ok, TOKENS_PER_ROLLOUT)

    def rows(self, targets: Sequence[RolloutTarget], n: int, seed: int) -> list[dict[str, Any]]:
        """A row source for CachedRolloutSampler, shaped like prm.datagen.rollouts.rollout_rows."""
        rows = []
        for t in targets:
            self.asked.append(steps_of(t))
            for j in range(n):
                o = self.outcome(t)
                rows.append({"rollout_id": f"ro-{t.prefix_hash}-{seed}-{j}", "solution_id": t.solution_id,
                             "problem_id": t.problem_id, "step_idx": t.step_idx, "prefix_hash": t.prefix_hash,
                             "rollout_idx": j, "text": o.text, "final_answer": "1" if o.is_correct else "0",
                             "is_correct": o.is_correct, "finish_reason": "stop", "model": "oracle", "seed": seed,
                             "completion_tokens": o.completion_tokens})
        return rows


class CountingSampler(CachedRolloutSampler):
    """The cached sampler over an oracle, recording each call's target count."""

    def __init__(self, oracle: Oracle, existing_rows: Sequence[dict[str, Any]] = ()) -> None:
        super().__init__(oracle.rows, existing_rows)
        self.oracle = oracle
        self.call_sizes: list[int] = []

    def sample(self, targets, n):  # type: ignore[no-untyped-def]
        self.call_sizes.append(len(targets))
        return super().sample(targets, n)


def make_solution(sid: str, pid: str, steps: Sequence[str], is_correct: bool | str | None = "auto",
                  tokens: int | None = None) -> SolutionToLabel:
    return SolutionToLabel.of_steps(sid, pid, f"Q{pid}\n", steps, "1",
                           is_correct="bad" not in steps if is_correct == "auto" else is_correct,
                           completion_tokens=tokens if tokens is not None else 10 * len(steps))


@pytest.fixture
def oracle_cls() -> type[Oracle]:
    return Oracle


@pytest.fixture
def sampler_of():
    """``sampler_of(oracle, existing_rows=())`` -> a counting cached sampler."""
    return CountingSampler


@pytest.fixture
def solution():
    """``solution(sid, pid, steps, is_correct="auto", tokens=None)``; "auto" = right iff no 'bad' step."""
    return make_solution
