"""95% intervals over test *problems* for best-of-N accuracy and its paired gain over majority vote on the same
problems (a problem's solutions are resampled together).

:func:`pooled_bon` takes several seeds' PRMs scored on the same test set: the figure is the mean over seeds, and a
bootstrap replicate resamples problems, so the interval covers the test problems and the seeds at once.
:func:`paired_bon_difference` compares two such scorers on the same test problems."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from prm.best_of_n.picks import MAJORITY, _by_problem, _pick, majority_pick
from prm.first_error import ScoredSolution
from prm.metrics import bootstrap_mean_ci, paired_bootstrap_diff_ci


def bon_correct(test: Sequence[ScoredSolution], n: int, how: str) -> dict[str, float]:
    """Per test problem with at least ``n`` solutions: 1.0 when the ``how`` pick (an aggregation, or
    :data:`MAJORITY`) of its first ``n`` solutions is correct, else 0.0."""
    out = {}
    for pid, group in _by_problem(test).items():
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


def pooled_bon(runs: Sequence[tuple[Sequence[ScoredSolution], str]], n: int, *, seed: int = 0) -> dict[str, object]:
    """Best-of-``n`` over seeds from (test solutions, chosen aggregation) per seed: the accuracy averaged over
    seeds per problem, its interval, and the paired gain over majority vote (which no seed changes).

    >>> sols = [ScoredSolution(f"{p}{i}", p, (0.9 if i else 0.2,), -1, str(i), bool(i)) for p in "ab" for i in (0, 1)]
    >>> r = pooled_bon([(sols, "min"), (sols, "last")], 2)
    >>> r["bon_acc"], r["majority_acc"], r["bon_gain"]
    (1.0, 0.0, 1.0)
    """
    picks = _pooled_picks(runs, n)
    majority = bon_correct(runs[0][0], n, MAJORITY) if runs else {}
    pids = sorted(p for p in picks if p in majority)
    if not pids:
        return dict.fromkeys(("bon_acc", "bon_acc_ci", "bon_gain", "bon_gain_ci", "majority_acc"))
    a = [picks[p] for p in pids]
    b = [majority[p] for p in pids]
    return {"bon_acc": sum(a) / len(a), "bon_acc_ci": bootstrap_mean_ci(a, seed=seed),
            "bon_gain": (sum(a) - sum(b)) / len(a), "bon_gain_ci": paired_bootstrap_diff_ci(a, b, seed=seed),
            "majority_acc": sum(b) / len(b)}


def _pooled_picks(runs: Sequence[tuple[Sequence[ScoredSolution], str]], n: int) -> dict[str, float]:
    """Per test problem, the best-of-``n`` accuracy averaged over seeds."""
    picks: dict[str, list[float]] = defaultdict(list)
    for test, how in runs:
        for pid, ok in bon_correct(test, n, how).items():
            picks[pid].append(ok)
    return {pid: sum(v) / len(v) for pid, v in picks.items()}


def paired_bon_difference(a: Sequence[tuple[Sequence[ScoredSolution], str]],
                          b: Sequence[tuple[Sequence[ScoredSolution], str]], n: int, *, seed: int = 0
                          ) -> tuple[float | None, tuple[float, float] | None]:
    """Best-of-``n`` accuracy of scorer ``a`` minus scorer ``b`` (each: (test solutions, aggregation) per seed,
    averaged over seeds per problem) on the problems both picked for, with its paired 95% interval.

    >>> sols = [ScoredSolution(f"{p}{i}", p, (0.9 if i else 0.2,), -1, str(i), bool(i)) for p in "ab" for i in (0, 1)]
    >>> paired_bon_difference([(sols, "min")], [(sols, "min"), (sols, "min")], 2)
    (0.0, (0.0, 0.0))
    """
    pa, pb = _pooled_picks(a, n), _pooled_picks(b, n)
    pids = sorted(pa.keys() & pb.keys())
    if not pids:
        return None, None
    x, y = [pa[p] for p in pids], [pb[p] for p in pids]
    return (sum(x) - sum(y)) / len(pids), paired_bootstrap_diff_ci(x, y, seed=seed)
