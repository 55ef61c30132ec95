"""Judge training rows: policy samples of generated problems with exact truth, balanced by first-error position, each
with the verdict text the judge learns to write (a check of each step against the problem's words up to the first
wrong one, then the index)."""

from __future__ import annotations

import random
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from prm.format import split_steps
from prm.labeling import judge_prompt
from prm.tasks import ArithmeticProblem, first_error_index


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


# Between two sentences of a generated word problem: a stop, then whitespace (possessive: a run of spaces after a
# stop is consumed once).
_SENTENCE_BREAK = re.compile(r"(?<=[.?])\s++")


def _op_phrases(problem: ArithmeticProblem) -> list[str] | None:
    """Per gold step of a word problem, the words it comes from ("starts with 4 points, wins 5", "loses 3"); None
    for a chain problem or a question not in the generator's sentence pattern."""
    sentences = [s.rstrip(".?") for s in _SENTENCE_BREAK.split(problem.question.strip())]
    if problem.style != "word" or len(sentences) != problem.n_ops + 2:
        return None
    ops = [s.split(" ", 1)[-1] for s in sentences[1:-1]]  # drop the pronoun: "She wins 5" -> "wins 5"
    start = sentences[0][sentences[0].find("starts"):]
    return [f"{start}, {ops[0]}", *ops[1:]]


def verdict_text(problem: ArithmeticProblem, steps: Sequence[str], first_error: int) -> str:
    """The check the judge learns to write: for each paragraph up to the first wrong one, the problem's words for
    that step, the step they give, then what the paragraph wrote and whether its total matches; then the index in
    ``\\boxed{}`` as :func:`prm.labeling.judge.parse_vote` reads it. Reading the step against the problem's words
    is what catches the policy's typical error, a wrong operand.

    >>> from prm.tasks.arithmetic import ArithmeticConfig, generate_problems
    >>> p = generate_problems(1, ArithmeticConfig(n_ops=2, style="word"), seed=3)[0]
    >>> print(verdict_text(p, ["8+19 = 27", "27-18 = 19"], 1))
    0: starts with 8 points, wins 19 so 8+19 = 27; it says 8+19 = 27, right
    1: loses 18 so 27-18 = 9; it says 27-18 = 19, wrong
    \\boxed{1}
    """
    phrases = _op_phrases(problem)
    last = len(steps) - 1 if first_error < 0 else first_error
    lines = []
    for i, step in enumerate(steps[: last + 1]):
        verdict = "wrong" if i == first_error else "right"
        if i >= len(problem.gold_steps):
            lines.append(f"{i}: the problem has no step {i}; it says {step}, {verdict}")
        elif phrases is None:
            lines.append(f"{i}: {problem.gold_steps[i]}; it says {step}, {verdict}")
        else:
            lines.append(f"{i}: {phrases[i]} so {problem.gold_steps[i]}; it says {step}, {verdict}")
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
