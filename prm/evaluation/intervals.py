"""95% intervals over test *problems* for a PRM's headline figures: ProcessBench F1, best-of-N accuracy and
its paired gain over majority vote on the same problems (a problem's solutions are resampled together)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from prm.evaluation.metrics import bootstrap_mean_ci, harmonic_mean, paired_bootstrap_diff_ci, problem_bootstrap_ci
from prm.evaluation.prm_eval import MAJORITY, ScoredSolution, _pick, majority_pick, predict_first_error

Verdicts = list[tuple[int, int]]  # one problem's (predicted, true) first errors


def _f1(problems: list[Verdicts]) -> float | None:
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
    return problem_bootstrap_ci(list(per_problem.values()), _f1, seed=seed)


def bon_correct(test: Sequence[ScoredSolution], n: int, how: str) -> dict[str, float]:
    """Per test problem with at least ``n`` solutions: 1.0 when the ``how`` pick (an aggregation, or
    :data:`MAJORITY`) of its first ``n`` solutions is correct, else 0.0."""
    groups: dict[str, list[ScoredSolution]] = defaultdict(list)
    for s in test:
        groups[s.problem_id].append(s)
    out = {}
    for pid, group in groups.items():
        if len(group) >= n:
            pool = group[:n]
            picked = majority_pick(pool) if how == MAJORITY else _pick(pool, how)
            out[pid] = float(bool(picked.is_correct))
    return out


def bon_intervals(test: Sequence[ScoredSolution], n: int, how: str, *, seed: int = 0) -> dict[str, object]:
    """Best-of-``n`` with the aggregation ``how``: its 95% interval, and its gain over majority vote with a paired
    interval (the same problems on both sides).

    >>> sols = [ScoredSolution(f"{p}{i}", p, (0.9 if i else 0.2,), -1, str(i), bool(i)) for p in "ab" for i in (0, 1)]
    >>> r = bon_intervals(sols, 2, "min")
    >>> r["ci"], r["gain"], r["gain_ci"]
    ((1.0, 1.0), 1.0, (1.0, 1.0))
    """
    picked, majority = bon_correct(test, n, how), bon_correct(test, n, MAJORITY)
    pids = sorted(picked)
    if not pids:
        return {"ci": None, "gain": None, "gain_ci": None}
    a, b = [picked[p] for p in pids], [majority[p] for p in pids]
    return {"ci": bootstrap_mean_ci(a, seed=seed), "gain": (sum(a) - sum(b)) / len(pids),
            "gain_ci": paired_bootstrap_diff_ci(a, b, seed=seed)}
