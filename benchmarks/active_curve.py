"""The pure parts of the cost-quality benchmark (``benchmarks/active.py``): what a budget share may spend, the order
solutions are bought in, how active labeling splits its budget over rounds, and which rows meet issue 50's goals.

No models, no warehouse: every function takes plain numbers or rows, so tests script them.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, TypeVar

# The paired F1 difference from MC at 100% "reaches" MC when its interval's low end is above this (issue 50's goal).
REACH_MARGIN = 0.03
ACTIVE_MAX_SHARE = 0.10  # goal 1: active at MC's F1 with at most this share of MC's rollouts
ADAPTIVE_MAX_SHARE = 0.50  # goal 2: adaptive MC at MC's F1 with at most this share
FULL = 1.0  # the budget share of the reference row: MC's full bill


class HasProblem(Protocol):
    problem_id: str


T = TypeVar("T", bound=HasProblem)
Interval = Sequence[float] | None


def rollout_limit(share: float, full_bill: int, *, unbounded_at_full: bool = False) -> int | None:
    """Rollouts a method may charge at ``share`` of MC's full bill; None (no limit) for MC itself at the full share,
    whose bill the limit is (a reserved worst case would otherwise refuse its last solution).

    >>> rollout_limit(0.05, 1000), rollout_limit(0.1, 30), rollout_limit(1.0, 1000, unbounded_at_full=True)
    (50, 3, None)
    """
    if not 0 < share <= FULL:
        raise ValueError(f"budget share {share:g} must be in (0, 1]: a share of MC's full bill")
    if unbounded_at_full and share >= FULL:
        return None
    return math.floor(share * full_bill + 1e-9)


def round_caps(limit: int | None, rounds: int) -> list[int | None]:
    """Cumulative rollout caps of active labeling's rounds: an equal share each, and what a round leaves unspent
    carries over to the next (the cap is cumulative). None: no limit.

    >>> round_caps(100, 3), round_caps(None, 2)
    ([33, 66, 100], [None, None])
    """
    if rounds < 1:
        raise ValueError(f"rounds={rounds}: active labeling needs at least one round")
    return [None if limit is None else math.floor(limit * (r + 1) / rounds) for r in range(rounds)]


def problem_order(solutions: Sequence[T], seed: int) -> list[T]:
    """``solutions`` in a seeded random order of their problems, each problem's solutions together in their given
    order (rollouts of a shared prefix are charged once per problem, and OmegaPRM searches a problem at a time).

    >>> from types import SimpleNamespace as S
    >>> sols = [S(problem_id=p, i=i) for i, p in enumerate("aabbc")]
    >>> [s.i for s in problem_order(sols, 0)] == [s.i for s in problem_order(sols, 0)]
    True
    >>> sorted(s.i for s in problem_order(sols, 1)), [s.problem_id for s in problem_order(sols, 1)].count("a")
    ([0, 1, 2, 3, 4], 2)
    """
    groups: dict[str, list[T]] = {}
    for sol in solutions:
        groups.setdefault(sol.problem_id, []).append(sol)
    problems = sorted(groups)
    random.Random(seed).shuffle(problems)
    return [sol for p in problems for sol in groups[p]]


def reaches(ci: Interval, margin: float = REACH_MARGIN) -> bool:
    """Whether a paired difference from the reference (its 95% interval) reaches it: the interval's low end is above
    ``-margin`` and its high end at or above 0 (it holds 0, or the method is better).

    >>> reaches([-0.02, 0.01]), reaches([-0.05, 0.01]), reaches([-0.02, -0.01]), reaches(None)
    (True, False, False, False)
    """
    return ci is not None and ci[0] > -margin and ci[1] >= 0


def not_below(ci: Interval) -> bool:
    """Whether a paired difference's interval does not lie wholly below 0 ("at or above" the reference).

    >>> not_below([-0.1, 0.0]), not_below([-0.1, -0.01]), not_below(None)
    (True, False, False)
    """
    return ci is not None and ci[1] >= 0


def mean(values: Sequence[float]) -> float | None:
    """The mean, None for no values.

    >>> mean([1, 2]), mean([])
    (1.5, None)
    """
    return sum(values) / len(values) if values else None


def find_row(rows: Sequence[Mapping[str, Any]], method: str, share: float) -> Mapping[str, Any] | None:
    """The row of ``method`` at budget ``share`` (None when there is none)."""
    return next((r for r in rows if r["method"] == method and math.isclose(r["budget_share"], share)), None)


def active_vs_mc(rows: Sequence[Mapping[str, Any]], versus_mc: Mapping[tuple[str, float], tuple[Any, Interval]],
                 full_bill: int) -> dict[str, Any]:
    """``active`` at its smallest budget whose F1 is within MC-at-100%'s interval (or above it) against MC at 100%:
    the share of MC's rollouts it spent and the paired F1 difference with its interval; null fields and a ``reason``
    when no budget qualifies.

    >>> rows = [{"method": "mc", "budget_share": 1.0, "prm_f1": 0.9, "prm_f1_ci": [0.85, 0.95], "rollouts": 1000},
    ...         {"method": "active", "budget_share": 0.05, "prm_f1": 0.8, "prm_f1_ci": None, "rollouts": 40},
    ...         {"method": "active", "budget_share": 0.1, "prm_f1": 0.86, "prm_f1_ci": None, "rollouts": 90}]
    >>> active_vs_mc(rows, {("active", 0.1): (-0.04, [-0.08, 0.0])}, 1000)
    {'budget_share': 0.1, 'rollout_share': 0.09, 'f1_diff': -0.04, 'f1_diff_ci': [-0.08, 0.0]}
    >>> print(active_vs_mc(rows[:2], {}, 1000)["reason"])
    no active budget has an F1 within MC at 100%'s interval [0.850, 0.950]
    """
    empty = {"budget_share": None, "rollout_share": None, "f1_diff": None, "f1_diff_ci": None}
    ref = find_row(rows, "mc", FULL)
    if ref is None or ref.get("prm_f1_ci") is None:
        return {**empty, "reason": "MC at 100% has no PRM F1 interval (not run, or its PRM could not train)"}
    low, high = ref["prm_f1_ci"]
    for row in sorted((r for r in rows if r["method"] == "active"), key=lambda r: r["budget_share"]):
        if row.get("prm_f1") is not None and row["prm_f1"] >= low:
            diff, ci = versus_mc.get(("active", row["budget_share"]), (None, None))
            return {"budget_share": row["budget_share"], "rollout_share": _share(row["rollouts"], full_bill),
                    "f1_diff": diff, "f1_diff_ci": ci}
    return {**empty, "reason": f"no active budget has an F1 within MC at 100%'s interval [{low:.3f}, {high:.3f}]"}


def _share(rollouts: float | None, full_bill: int) -> float | None:
    return None if rollouts is None or not full_bill else rollouts / full_bill


def goals(rows: Sequence[Mapping[str, Any]], versus_mc: Mapping[tuple[str, float], tuple[Any, Interval]],
          versus_omegaprm: Mapping[float, tuple[Any, Interval]], full_bill: int) -> dict[str, Any]:
    """Issue 50's three goals, each ``met`` with the numbers behind it.

    1. ``active_at_mc_f1``: some ``active`` row spent at most 10% of MC's rollouts and reaches MC at 100%
       (:func:`reaches` on the paired F1 difference);
    2. ``adaptive_mc_at_mc_f1``: likewise an ``adaptive_mc`` row with at most 50%;
    3. ``active_not_below_omegaprm``: at every budget both trained at, active's paired F1 difference from OmegaPRM
       is not wholly below 0 (:func:`not_below`); unmet when a budget has an OmegaPRM PRM but no active one.

    >>> rows = [{"method": "active", "budget_share": 0.1, "rollouts": 80, "prm_f1": 0.9},
    ...         {"method": "omegaprm", "budget_share": 0.1, "rollouts": 95, "prm_f1": 0.85},
    ...         {"method": "adaptive_mc", "budget_share": 1.0, "rollouts": 600, "prm_f1": 0.9}]
    >>> g = goals(rows, {("active", 0.1): (0.0, [-0.02, 0.02]), ("adaptive_mc", 1.0): (0.01, [-0.01, 0.03])},
    ...           {0.1: (0.05, [0.01, 0.09])}, 1000)
    >>> g["active_at_mc_f1"]["met"], g["adaptive_mc_at_mc_f1"]["met"], g["active_not_below_omegaprm"]["met"]
    (True, False, True)
    """
    def candidates(method: str, max_share: float) -> list[dict[str, Any]]:
        out = []
        for row in sorted((r for r in rows if r["method"] == method), key=lambda r: r["budget_share"]):
            share = _share(row.get("rollouts"), full_bill)
            diff, ci = versus_mc.get((method, row["budget_share"]), (None, None))
            out.append({"budget_share": row["budget_share"], "rollout_share": share, "f1_diff": diff,
                        "f1_diff_ci": ci, "reaches": share is not None and share <= max_share + 1e-9 and reaches(ci)})
        return out

    active, adaptive = candidates("active", ACTIVE_MAX_SHARE), candidates("adaptive_mc", ADAPTIVE_MAX_SHARE)
    shares = sorted({r["budget_share"] for r in rows if r["method"] in ("active", "omegaprm")})
    by_budget = []
    for share in shares:
        omega, act = find_row(rows, "omegaprm", share), find_row(rows, "active", share)
        diff, ci = versus_omegaprm.get(share, (None, None))
        trained = omega is not None and omega.get("prm_f1") is not None
        if trained or (act is not None and act.get("prm_f1") is not None):
            by_budget.append({"budget_share": share, "f1_diff": diff, "f1_diff_ci": ci,
                              "not_below": not_below(ci) if trained else True})
    return {
        "active_at_mc_f1": {"met": any(r["reaches"] for r in active), "max_rollout_share": ACTIVE_MAX_SHARE,
                            "margin": REACH_MARGIN, "rows": active},
        "adaptive_mc_at_mc_f1": {"met": any(r["reaches"] for r in adaptive), "max_rollout_share": ADAPTIVE_MAX_SHARE,
                                 "margin": REACH_MARGIN, "rows": adaptive},
        "active_not_below_omegaprm": {"met": bool(by_budget) and all(r["not_below"] for r in by_budget),
                                      "by_budget": by_budget},
    }
