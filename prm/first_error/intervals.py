"""95% intervals over test *problems* for a PRM's ProcessBench F1 (a problem's solutions are resampled together).

:func:`pooled_f1` takes several seeds' PRMs scored on the same test set: the figure is pooled over seeds, and a
bootstrap replicate resamples problems with every seed's verdicts on a problem kept together, so the interval covers
the test problems and the seeds at once. :func:`paired_f1_difference` compares two such scorers on the same test
problems (a replicate keeps both scorers' verdicts on a problem together), which is what says whether a difference
between two label sources is real."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from prm.first_error.scores import ScoredSolution, predict_first_error
from prm.metrics import harmonic_mean, problem_bootstrap_ci

Verdicts = list[tuple[int, int]]  # one problem's (predicted, true) first errors


def verdict_f1(problems: list[Verdicts]) -> float | None:
    """ProcessBench F1 of per-problem (predicted, true) first errors; None without a wrong or a right one."""
    wrong = [p == t for v in problems for p, t in v if t >= 0]
    right = [p == -1 for v in problems for p, t in v if t < 0]
    if not wrong or not right:
        return None
    return harmonic_mean(sum(wrong) / len(wrong), sum(right) / len(right))


def f1_ci(test: Sequence[ScoredSolution], threshold: float, *, seed: int = 0) -> tuple[float, float] | None:
    """95% interval over problems of the ProcessBench F1 at ``threshold`` (chosen on validation).

    >>> sols = [ScoredSolution(f"{p}{i}", p, (0.9, 0.1 if i else 0.9), 1 if i else -1) for p in "abcd" for i in (0, 1)]
    >>> f1_ci(sols, 0.5)
    (1.0, 1.0)
    """
    per_problem: dict[str, Verdicts] = defaultdict(list)
    for s in test:
        if s.first_error is not None:
            per_problem[s.problem_id].append((predict_first_error(s.scores, threshold), s.first_error))
    return problem_bootstrap_ci(list(per_problem.values()), verdict_f1, seed=seed)


def _verdicts(runs: Sequence[tuple[Sequence[ScoredSolution], float]]) -> dict[str, Verdicts]:
    """Per test problem, every seed's (predicted, true) first errors from (test solutions, threshold) per seed."""
    per_problem: dict[str, Verdicts] = defaultdict(list)
    for test, threshold in runs:
        for s in test:
            if s.first_error is not None:
                per_problem[s.problem_id].append((predict_first_error(s.scores, threshold), s.first_error))
    return per_problem


def pooled_f1(runs: Sequence[tuple[Sequence[ScoredSolution], float]], *, seed: int = 0
              ) -> tuple[float | None, tuple[float, float] | None]:
    """(ProcessBench F1 over every seed's verdicts, its interval) from (test solutions, threshold) per seed."""
    problems = list(_verdicts(runs).values())
    return verdict_f1(problems), problem_bootstrap_ci(problems, verdict_f1, seed=seed)


def paired_f1_difference(a: Sequence[tuple[Sequence[ScoredSolution], float]],
                         b: Sequence[tuple[Sequence[ScoredSolution], float]], *, seed: int = 0
                         ) -> tuple[float | None, tuple[float, float] | None]:
    """Pooled ProcessBench F1 of scorer ``a`` minus scorer ``b`` (each: (test solutions, threshold) per seed) on
    the problems both scored, and its paired 95% interval over those problems.

    >>> sols = [ScoredSolution(f"{p}{i}", p, (0.9, 0.1 if i else 0.9), 1 if i else -1) for p in "abcd" for i in (0, 1)]
    >>> paired_f1_difference([(sols, 0.5)], [(sols, 0.05)])  # b never flags a step: its F1 is 0
    (1.0, (1.0, 1.0))
    """
    va, vb = _verdicts(a), _verdicts(b)
    problems = [(va[p], vb[p]) for p in sorted(va.keys() & vb.keys())]

    def diff(ps: list[tuple[Verdicts, Verdicts]]) -> float | None:
        fa, fb = verdict_f1([x for x, _ in ps]), verdict_f1([y for _, y in ps])
        return None if fa is None or fb is None else fa - fb

    return diff(problems), problem_bootstrap_ci(problems, diff, seed=seed)
