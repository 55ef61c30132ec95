"""The pure parts of benchmarks/active.py (benchmarks/active_curve.py) on scripted numbers: budgets, the order
solutions are bought in, the row active is compared with MC at, and issue 50's goals."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from benchmarks.active_curve import active_vs_mc, goals, problem_order, reaches, rollout_limit, round_caps

FULL_BILL = 1000
MC_FULL = {"method": "mc", "budget_share": 1.0, "rollouts": 1000, "prm_f1": 0.90, "prm_f1_ci": [0.86, 0.94]}


def _row(method: str, share: float, rollouts: float, f1: float | None) -> dict:
    return {"method": method, "budget_share": share, "rollouts": rollouts, "prm_f1": f1, "prm_f1_ci": None}


def test_a_budget_share_is_a_floor_of_mc_s_bill_and_mc_at_full_is_unbounded() -> None:
    assert rollout_limit(0.02, 1049) == 20
    assert rollout_limit(1.0, 1049) == 1049
    assert rollout_limit(1.0, 1049, unbounded_at_full=True) is None
    assert rollout_limit(0.25, 1049, unbounded_at_full=True) == 262
    for bad in (0.0, 1.5, -0.1):
        with pytest.raises(ValueError, match="share of MC's full bill"):
            rollout_limit(bad, 1049)


def test_active_rounds_split_the_budget_cumulatively_and_never_exceed_it() -> None:
    caps = round_caps(50, 3)
    assert caps == [16, 33, 50] and caps[-1] == 50
    assert round_caps(7, 1) == [7]
    with pytest.raises(ValueError, match="at least one round"):
        round_caps(50, 0)


def test_the_buying_order_keeps_problems_whole_and_a_fixed_seed_repeats() -> None:
    sols = [SimpleNamespace(problem_id=f"p{i // 3}", solution_id=f"s{i}") for i in range(30)]
    first = [s.solution_id for s in problem_order(sols, 7)]
    assert first == [s.solution_id for s in problem_order(sols, 7)]
    assert sorted(first) == sorted(s.solution_id for s in sols)
    problems = [s.problem_id for s in problem_order(sols, 7)]
    runs = [p for i, p in enumerate(problems) if i == 0 or p != problems[i - 1]]
    assert len(runs) == 10  # each problem's solutions are bought together
    orders = {tuple(s.problem_id for s in problem_order(sols, seed)) for seed in range(5)}
    assert len(orders) > 1  # the seed changes which problems come first


def test_reaching_mc_needs_an_interval_low_end_above_minus_three_points_and_not_wholly_below_zero() -> None:
    assert reaches([-0.029, 0.02]) and reaches([0.01, 0.05])
    assert not reaches([-0.031, 0.02]) and not reaches([-0.02, -0.001]) and not reaches(None)


def test_active_is_compared_at_its_smallest_budget_within_mc_s_interval() -> None:
    rows = [MC_FULL, _row("active", 0.02, 15, 0.70), _row("active", 0.05, 48, 0.87), _row("active", 0.1, 90, 0.91)]
    versus = {("active", 0.05): (-0.03, [-0.07, 0.01]), ("active", 0.1): (0.01, [-0.02, 0.04])}
    picked = active_vs_mc(rows, versus, FULL_BILL)
    assert picked == {"budget_share": 0.05, "rollout_share": 0.048, "f1_diff": -0.03, "f1_diff_ci": [-0.07, 0.01]}


def test_no_qualifying_budget_gives_null_fields_and_a_reason() -> None:
    picked = active_vs_mc([MC_FULL, _row("active", 0.05, 48, 0.80)], {}, FULL_BILL)
    assert picked["rollout_share"] is None and picked["f1_diff"] is None and picked["f1_diff_ci"] is None
    assert "0.860" in picked["reason"]
    untrained = active_vs_mc([{**MC_FULL, "prm_f1": None, "prm_f1_ci": None}], {}, FULL_BILL)
    assert untrained["f1_diff"] is None and "could not train" in untrained["reason"]


def test_goals_read_the_rollout_share_spent_not_the_budget_share() -> None:
    rows = [MC_FULL, _row("active", 0.25, 95, 0.9), _row("omegaprm", 0.25, 240, 0.85),
            _row("adaptive_mc", 1.0, 520, 0.9), _row("adaptive_mc", 0.25, 250, 0.8)]
    versus_mc = {("active", 0.25): (0.0, [-0.02, 0.02]), ("adaptive_mc", 1.0): (0.0, [-0.01, 0.01]),
                 ("adaptive_mc", 0.25): (-0.1, [-0.15, -0.05])}
    g = goals(rows, versus_mc, {0.25: (0.05, [0.0, 0.1])}, FULL_BILL)
    assert g["active_at_mc_f1"]["met"]  # a 25% budget, but only 9.5% of MC's rollouts spent
    assert not g["adaptive_mc_at_mc_f1"]["met"]  # 52% at MC's F1; at 25% below it
    assert g["active_not_below_omegaprm"]["met"]
    assert [r["reaches"] for r in g["adaptive_mc_at_mc_f1"]["rows"]] == [False, False]


def test_active_below_omegaprm_at_one_budget_or_untrained_where_omegaprm_trained_misses_the_third_goal() -> None:
    rows = [MC_FULL, _row("active", 0.05, 40, 0.6), _row("omegaprm", 0.05, 50, 0.8),
            _row("active", 0.25, 200, None), _row("omegaprm", 0.25, 240, 0.85)]
    below = goals(rows, {}, {0.05: (-0.2, [-0.3, -0.1])}, FULL_BILL)["active_not_below_omegaprm"]
    assert not below["met"] and [r["not_below"] for r in below["by_budget"]] == [False, False]
    assert not goals([MC_FULL], {}, {}, FULL_BILL)["active_not_below_omegaprm"]["met"]  # nothing compared
