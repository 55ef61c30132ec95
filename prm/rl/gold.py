"""RL on problems known only by their gold answer (GSM8K, MATH, a user's file): the pool entry, and the held-out
scoring that needs nothing else.

The reward already grades any answer (``prm.rewards.outcome`` through ``verifiers.grade_answers``); what was
arithmetic-only is the held-out table, whose per-step error reads the generator's exact truth. For a pool with
any problem of another task, every held-out problem is scored by its outcome alone: answer accuracy (the same
grader as the reward), the mixed share and the mean steps per sample, and ``step_error_rate`` None ("no step
truth"), never a number it cannot know. A pool of generated arithmetic only is scored as before
(:func:`prm.policy.evaluate.score_samples`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from prm.format import split_steps
from prm.policy import EvalRow, EvalTable, score_samples
from prm.tasks import MAX_OPS, ArithmeticProblem
from verifiers import extract_answer, grade_answers


@dataclass(frozen=True)
class GoldProblem:
    """A problem with a gold answer and no exact step truth.

    >>> GoldProblem.from_row({"problem_id": "g1", "question": "q", "gold_answer": " 18 ", "n_gold_steps": 40}).n_ops
    32
    """

    problem_id: str
    question: str
    answer: str  # the gold answer, graded against with verifiers.grade_answers
    # The difficulty eval_ops/train_ops select: the gold solution's step count, clamped to 1..MAX_OPS (1 unknown).
    n_ops: int
    gold_text: str  # the gold solution, else the answer: prm.policy.sample_solutions sizes its token budget by it

    def gold_solution(self) -> str:
        """The gold solution text (what the arithmetic problems' method of the same name returns)."""
        return self.gold_text

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> GoldProblem:
        """From a ``problems`` row that has a gold answer."""
        answer = str(row["gold_answer"]).strip()
        steps = row.get("n_gold_steps") or 1
        return cls(str(row["problem_id"]), str(row["question"]), answer, max(1, min(int(steps), MAX_OPS)),
                   str(row.get("gold_solution") or f"The answer is {answer}"))


RLProblem = ArithmeticProblem | GoldProblem


def score_heldout(problems: Sequence[RLProblem], samples: Sequence[Sequence[str]],
                  temperature: float = 1.0) -> EvalTable:
    """The held-out table of ``samples[i]`` sampled on ``problems[i]``: :func:`prm.policy.evaluate.score_samples`
    for generated arithmetic only, else :func:`score_outcomes` (see the module docstring)."""
    if all(isinstance(p, ArithmeticProblem) for p in problems):
        return score_samples(problems, samples, temperature)  # type: ignore[arg-type]
    return score_outcomes(problems, samples, temperature)


def score_outcomes(problems: Sequence[RLProblem], samples: Sequence[Sequence[str]],
                   temperature: float = 1.0) -> EvalTable:
    """Per difficulty and pooled (``n_ops=0``): answer accuracy against the gold answer, mixed share, mean steps;
    ``step_error_rate`` None (no step truth). ``problem_accuracy``: each problem's share of right samples.

    >>> p = GoldProblem("g", "q", "1234", 2, "...")
    >>> t = score_outcomes([p], [["So 1,234 in all.\\nThe answer is 1,234.", "The answer is 12"]])
    >>> r = t.row(0)
    >>> r.answer_accuracy, r.mixed_share, r.step_error_rate, r.mean_steps, t.problem_accuracy  # answer lines: no step
    (0.5, 1.0, None, 0.5, (0.5,))
    """
    answers = [extract_answer(t) for texts in samples for t in texts]
    golds = [str(p.answer) for p, texts in zip(problems, samples, strict=True) for _ in texts]
    graded = iter(grade_answers(list(zip(answers, golds, strict=True))))
    right = [[next(graded) is True for _ in texts] for texts in samples]
    steps = [[len(split_steps(t)) for t in texts] for texts in samples]

    def row(n_ops: int, idx: list[int]) -> EvalRow:
        n_samples = sum(len(right[i]) for i in idx)
        return EvalRow(n_ops=n_ops, n_problems=len(idx), n_samples=n_samples,
                       answer_accuracy=sum(sum(right[i]) for i in idx) / max(n_samples, 1),
                       step_error_rate=None,  # type: ignore[arg-type]  # no step truth: unknown, not 0
                       mixed_share=sum(any(right[i]) and not all(right[i]) for i in idx) / max(len(idx), 1),
                       mean_steps=sum(sum(steps[i]) for i in idx) / max(n_samples, 1))

    by_ops: dict[int, list[int]] = defaultdict(list)
    for i, p in enumerate(problems):
        by_ops[p.n_ops].append(i)
    rows = [row(0, list(range(len(problems)))), *(row(ops, idx) for ops, idx in sorted(by_ops.items()))]
    return EvalTable(rows=tuple(rows), temperature=temperature, samples_per_problem=len(samples[0]) if samples else 0,
                     problem_accuracy=tuple(sum(r) / max(len(r), 1) for r in right))


__all__ = ["GoldProblem", "RLProblem", "score_heldout", "score_outcomes"]
