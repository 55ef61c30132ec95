"""Step sensitivity and the problem bootstrap on hand-computed cases."""

from __future__ import annotations

import pytest

from prm.best_of_n import bon_intervals
from prm.first_error import ScoredSolution, f1_ci
from prm.metrics import SiblingPair, problem_bootstrap_ci, score_pairs, sibling_pairs, step_sensitivity


def _sol(pid: str, steps: list[str], first_error: int | None) -> dict:
    return {"problem_id": pid, "steps": steps, "first_error": first_error}


def test_sibling_pairs_need_a_shared_right_prefix_and_one_first_error() -> None:
    sols = [
        _sol("p", ["4+9 = 13", "13-3 = 10"], -1),
        _sol("p", ["4+9 = 13", "13-3 = 99"], 1),
        _sol("p", ["4+9 = 13", "13-3 = 99"], 1),  # a duplicate pair counts once
        _sol("p", ["4+8 = 12", "12-3 = 9"], 0),  # sibling of both right solutions' step 0
        _sol("p", ["4+8 = 12", "12-3 = 10"], 0),  # same wrong step 0 as above: no new pair
        _sol("q", ["1+1 = 3"], 0),  # no right sibling on its problem
        _sol("p", ["4+9 = 13", "13-3 = 11"], None),  # unknown truth: never paired
    ]
    pairs = sibling_pairs(sols)
    assert [(p.problem_id, p.prefix, p.right, p.wrong) for p in pairs] == [
        ("p", (), "4+9 = 13", "4+8 = 12"),
        ("p", ("4+9 = 13",), "13-3 = 10", "13-3 = 99"),
    ]


def test_two_wrong_siblings_make_no_pair() -> None:
    # both continuations of the shared prefix are first errors: neither is the right sibling
    sols = [_sol("p", ["1+1 = 2", "2+1 = 4"], 1), _sol("p", ["1+1 = 2", "2+1 = 5"], 1)]
    assert sibling_pairs(sols) == []


def test_sensitivity_counts_ties_as_half_and_pools_pairs() -> None:
    pairs = [SiblingPair("p", (), "a", "b"), SiblingPair("p", ("a",), "c", "d"), SiblingPair("q", (), "e", "f"),
             SiblingPair("q", (), "e", "g")]
    s = step_sensitivity(pairs, [0.9, 0.5, 0.8, 0.8], [0.1, 0.5, 0.7, 0.9])
    assert s.value == pytest.approx((1 + 0.5 + 1 + 0) / 4)
    assert (s.n_pairs, s.n_problems) == (4, 2)
    low, high = s.ci
    assert low <= s.value <= high


def test_sensitivity_of_a_prior_over_position_is_one_half() -> None:
    # a scorer that only sees the position scores both siblings alike: every pair is a tie
    pairs = [SiblingPair(f"p{i}", ("x",) * (i % 3), "r", "w") for i in range(12)]
    scores = [1.0 / (len(p.prefix) + 2) for p in pairs]
    assert step_sensitivity(pairs, scores, scores).value == 0.5


def test_sensitivity_rejects_missing_scores_and_reports_none_without_pairs() -> None:
    with pytest.raises(ValueError, match="score both siblings"):
        step_sensitivity([SiblingPair("p", (), "a", "b")], [0.5], [])
    assert step_sensitivity([], [], []).value is None


def test_score_pairs_scores_each_sibling_after_its_prefix() -> None:
    seen = []

    def score(items):
        seen.extend(items)
        return [[0.0] * (len(steps) - 1) + [float(len(steps[-1]))] for _, steps in items]

    right, wrong = score_pairs(score, {"p": "Q"}, [SiblingPair("p", ("s0",), "ok", "wrong")])
    assert (right, wrong) == ([2.0], [5.0])
    assert seen == [("Q", ["s0", "ok"]), ("Q", ["s0", "wrong"])]


def test_problem_bootstrap_resamples_whole_problems_and_repeats_by_seed() -> None:
    problems = [[1.0] * (i % 4) + [0.0] * (i % 3) for i in range(1, 25)]

    def share(ps):
        return sum(map(sum, ps)) / sum(map(len, ps))

    a = problem_bootstrap_ci(problems, share, seed=0)
    assert a == problem_bootstrap_ci(problems, share, seed=0)
    assert a != problem_bootstrap_ci(problems, share, seed=1)
    assert a[0] < share(problems) < a[1]
    assert problem_bootstrap_ci([], share) is None
    assert problem_bootstrap_ci([[1.0]], lambda ps: None) is None


def test_f1_and_best_of_n_intervals_on_a_hand_computed_case() -> None:
    # problem a: the PRM flags the wrong solution at its first error and accepts the right one; problem b: it
    # accepts one wrong solution and flags the other right. F1 = harmonic(2/3 wrong found, 1/1 right) = 0.8;
    # a resample of only a gives 1.0, one of only b has no right solution (undefined, skipped).
    sols = [ScoredSolution("a0", "a", (0.9, 0.9), -1, "1", True), ScoredSolution("a1", "a", (0.9, 0.1), 1, "2", False),
            ScoredSolution("b0", "b", (0.9, 0.9), 1, "2", False), ScoredSolution("b1", "b", (0.1,), 0, "3", False)]
    low, high = f1_ci(sols, 0.5)
    assert 0.5 <= low <= 0.8 < high == 1.0
    r = bon_intervals(sols, 2, "min")  # a: picks a0 (right), majority picks a0 too (tie, first); b: both wrong
    assert r["gain"] == 0.0 and r["gain_ci"] == (0.0, 0.0)
    assert r["ci"][0] <= 0.5 <= r["ci"][1]
