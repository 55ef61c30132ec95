"""95% intervals over test *problems* for a PRM's headline figures: ProcessBench F1, best-of-N accuracy and
its paired gain over majority vote on the same problems (a problem's solutions are resampled together).

The ``pooled_*`` functions take several seeds' PRMs scored on the same test set: the figure is the mean over
seeds, and a bootstrap replicate resamples problems with every seed's verdicts on a problem kept together, so
the interval covers the test problems and the seeds at once. The ``paired_*`` functions compare two such
scorers on the same test problems (a replicate keeps both scorers' verdicts on a problem together), which is
what says whether a difference between two label sources is real."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from prm.evaluation.metrics import (
    bootstrap_mean_ci,
    harmonic_mean,
    paired_bootstrap_diff_ci,
    problem_bootstrap_ci,
)
from prm.evaluation.prm_eval import (
    MAJORITY,
    ScoredSolution,
    _by_problem,
    _pick,
    majority_pick,
    predict_first_error,
)

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
    return _f1(problems), problem_bootstrap_ci(problems, _f1, seed=seed)


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
        fa, fb = _f1([x for x, _ in ps]), _f1([y for _, y in ps])
        return None if fa is None or fb is None else fa - fb

    return diff(problems), problem_bootstrap_ci(problems, diff, seed=seed)


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
