"""Flawed positives: right answers reached through a wrong step, by exact step truth (FAPO's term).

An RL arm can raise answer accuracy while teaching the policy to reach right answers through wrong steps; the share
of right answers with a wrong step says whether it did. Measured on held-out samples of generated arithmetic (the
only problems with exact step truth, :func:`prm.tasks.step_truth`); per problem as (flawed, right) counts, so the
share's 95% interval resamples problems (:func:`prm.evaluation.problem_bootstrap_ci`) and two arms on the same
problems are compared paired.
"""

from __future__ import annotations

from collections.abc import Sequence

from prm.format import split_steps
from prm.metrics import problem_bootstrap_ci
from prm.tasks import ArithmeticProblem, step_truth
from verifiers import extract_answer

Counts = tuple[int, int]  # (right answers with a wrong step, right answers) of one problem's samples


def _is_right(problem: ArithmeticProblem, text: str) -> bool:
    """The held-out table's grading (prm.policy.evaluate): the extracted answer is the exact integer answer."""
    answer = extract_answer(text)
    return answer is not None and answer.lstrip("-").isdigit() and int(answer) == problem.answer


def flawed_counts(problems: Sequence[object], samples: Sequence[Sequence[str]]) -> tuple[Counts, ...]:
    """Per problem, (right answers with a step that exact truth marks wrong, right answers); ``()`` when any
    problem has no step truth (not generated arithmetic): the share is then unknown, never 0.

    >>> from prm.tasks.arithmetic import ArithmeticConfig, generate_problems
    >>> p = generate_problems(1, ArithmeticConfig(n_ops=2, operators="+-", style="chain"), seed=1)[0]
    >>> good = "\\n".join(p.gold_steps) + f"\\nAnswer: {p.answer}"
    >>> flawed = f"5-19+3 = -14+3\\n-14+3 = -12\\nAnswer: {p.answer}"
    >>> flawed_counts([p], [[good, flawed, "Answer: 0"]])
    ((1, 2),)
    """
    if not all(isinstance(p, ArithmeticProblem) for p in problems):
        return ()
    out = []
    for problem, texts in zip(problems, samples, strict=True):
        right = [t for t in texts if _is_right(problem, t)]  # type: ignore[arg-type]
        flawed = sum(not all(step_truth(problem, split_steps(t))) for t in right)  # type: ignore[arg-type]
        out.append((flawed, len(right)))
    return tuple(out)


def flawed_share(counts: Sequence[Counts]) -> float | None:
    """Pooled share of right answers with a wrong step; None when no answer was right.

    >>> flawed_share([(1, 2), (0, 2)]), flawed_share([(0, 0)])
    (0.25, None)
    """
    right = sum(c for _, c in counts)
    return sum(f for f, _ in counts) / right if right else None


def flawed_ci(counts: Sequence[Counts], *, seed: int = 0) -> tuple[float, float] | None:
    """95% bootstrap interval of :func:`flawed_share`, resampling problems; None without a right answer.

    >>> flawed_ci([(1, 2), (1, 2)])
    (0.5, 0.5)
    """
    return problem_bootstrap_ci(list(counts), flawed_share, seed=seed) if flawed_share(counts) is not None else None


def _paired(pairs: Sequence[tuple[Counts, Counts]]) -> float | None:
    a, b = flawed_share([x for x, _ in pairs]), flawed_share([y for _, y in pairs])
    return None if a is None or b is None else a - b


def flawed_diff(a: Sequence[Counts], b: Sequence[Counts], *, seed: int = 0
                ) -> tuple[float | None, tuple[float, float] | None]:
    """``flawed_share(a) - flawed_share(b)`` on the same problems (``a[i]`` and ``b[i]`` one problem) and its 95%
    paired bootstrap interval over problems; (None, None) when either side has no right answer.

    >>> flawed_diff([(1, 2), (1, 2)], [(0, 2), (0, 2)])
    (0.5, (0.5, 0.5))
    """
    if len(a) != len(b):
        raise ValueError(f"flawed_diff got {len(a)} and {len(b)} problems: a paired difference needs the same "
                         "held-out problems on both sides")
    pairs = list(zip(a, b, strict=True))
    value = _paired(pairs)
    return (value, problem_bootstrap_ci(pairs, _paired, seed=seed)) if value is not None else (None, None)
