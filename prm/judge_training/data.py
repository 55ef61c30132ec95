"""Judge training rows: policy samples of generated problems with exact truth, balanced by first-error position, each
with the verdict text the judge learns to write (a check per step up to the first wrong one, then the index)."""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from prm.format import split_steps
from prm.labeling.judge import judge_prompt
from prm.tasks.arithmetic import ArithmeticProblem, first_error_index


@dataclass(frozen=True)
class JudgeExample:
    """One solution to judge: the judge's user message, the verdict it should write, and the exact first error."""

    problem_id: str
    question: str
    steps: tuple[str, ...]
    target: str  # verdict_text: what the fine-tuned judge writes
    first_error: int  # -1 = every step right

    @property
    def prompt(self) -> str:
        """:func:`prm.labeling.judge.judge_prompt`: the message the judge asset sends, unchanged."""
        return judge_prompt(self.question, self.steps)

    @property
    def n_steps(self) -> int:
        return len(self.steps)


def verdict_text(problem: ArithmeticProblem, steps: Sequence[str], first_error: int) -> str:
    """A check of each paragraph up to the first wrong one (its running total against the problem's), then the
    index in ``\\boxed{}`` as :func:`prm.labeling.judge.parse_vote` reads it.

    >>> from prm.tasks.arithmetic import ArithmeticConfig, generate_problems
    >>> p = generate_problems(1, ArithmeticConfig(n_ops=2, style="word"), seed=3)[0]
    >>> print(verdict_text(p, ["8+19 = 27", "27-18 = 19"], 1))
    0: 8+19 = 27 right
    1: 27-18 = 19 wrong, the total is 9
    \\boxed{1}
    """
    last = len(steps) - 1 if first_error < 0 else first_error
    lines = []
    for i, step in enumerate(steps[: last + 1]):
        if i != first_error:
            lines.append(f"{i}: {step} right")
        elif i < len(problem.intermediates):
            lines.append(f"{i}: {step} wrong, the total is {problem.intermediates[i]}")
        else:
            lines.append(f"{i}: {step} wrong, the problem has no step {i}")
    return "\n".join([*lines, f"\\boxed{{{first_error}}}"])


def examples(problems: Sequence[ArithmeticProblem], samples: Sequence[Sequence[str]]) -> list[JudgeExample]:
    """Every sample with at least one step, with its exact first error and verdict."""
    out = []
    for problem, texts in zip(problems, samples, strict=True):
        for text in texts:
            steps = split_steps(text)
            if steps:
                first = first_error_index(problem, steps)
                out.append(JudgeExample(problem.problem_id, problem.question, tuple(steps),
                                        verdict_text(problem, steps, first), first))
    return out


def balance(rows: Sequence[JudgeExample], seed: int) -> list[JudgeExample]:
    """As many right solutions as wrong ones, the wrong ones spread over first-error positions round-robin (a
    position with few wrong samples gives all it has), shuffled by ``seed``.

    >>> rows = [JudgeExample("p", "q", ("s",) * 4, "t", e) for e in (-1, -1, -1, 0, 0, 0, 2)]
    >>> sorted(r.first_error for r in balance(rows, seed=0))
    [-1, -1, -1, 0, 0, 2]
    """
    rng = random.Random(seed)
    by_position: dict[int, list[JudgeExample]] = defaultdict(list)
    for row in rows:
        by_position[row.first_error].append(row)
    for group in by_position.values():
        rng.shuffle(group)
    right = by_position.pop(-1, [])
    wrong: list[JudgeExample] = []
    queues = [by_position[k] for k in sorted(by_position)]
    while len(wrong) < len(right) and any(queues):
        for queue in queues:
            if queue and len(wrong) < len(right):
                wrong.append(queue.pop())
    kept = right[: len(wrong)] + wrong
    rng.shuffle(kept)
    return kept
