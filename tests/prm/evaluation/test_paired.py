"""Paired differences of two scorers on the same test problems, on hand-computed cases."""

from __future__ import annotations

import pytest

from prm.best_of_n import paired_bon_difference
from prm.first_error import ScoredSolution, paired_f1_difference
from prm.metrics import SiblingPair, paired_sensitivity_difference

# Problem a: flagged at its first error and accepted; problem b: one wrong solution accepted, the other flagged.
SOLS = [ScoredSolution("a0", "a", (0.9, 0.9), -1, "1", True), ScoredSolution("a1", "a", (0.9, 0.1), 1, "2", False),
        ScoredSolution("b0", "b", (0.9, 0.9), 1, "2", False), ScoredSolution("b1", "b", (0.1,), 0, "3", False)]


def test_f1_difference_is_a_minus_b_with_problems_resampled_together() -> None:
    # At 0.5 the F1 is harmonic(2/3 wrong found, 1/1 right accepted) = 0.8; at 0.05 nothing is flagged: F1 0.
    # A resample of only a gives 1.0 - 0.0; one of only b has no right solution (undefined, skipped).
    delta, (low, high) = paired_f1_difference([(SOLS, 0.5)], [(SOLS, 0.05)])
    assert delta == pytest.approx(0.8)
    assert low >= 0.8 - 1e-9 and high == 1.0
    assert paired_f1_difference([(SOLS, 0.5)], [(SOLS, 0.5)]) == (0.0, (0.0, 0.0))


def test_f1_difference_keeps_only_problems_both_scored() -> None:
    delta, _ = paired_f1_difference([(SOLS, 0.5)], [(SOLS[:2], 0.5)])  # b scored only problem a
    assert delta == 0.0  # on problem a alone both are perfect


def test_sensitivity_difference_on_hand_computed_pairs() -> None:
    pairs = [SiblingPair("p", (), "a", "b"), SiblingPair("q", (), "c", "d")]
    a = [(pairs, [0.9, 0.5], [0.1, 0.5])]  # p ordered right, q tied: 0.75
    b = [(pairs, [0.5, 0.5], [0.5, 0.5])]  # a prior over position: 0.5
    delta, (low, high) = paired_sensitivity_difference(a, b)
    assert delta == pytest.approx(0.25)
    assert (low, high) == pytest.approx((0.0, 0.5))  # only q: 0; only p: 0.5
    assert paired_sensitivity_difference(a, []) == (None, None)


def test_best_of_n_difference_averages_seeds_per_problem_and_repeats() -> None:
    sols = [ScoredSolution(f"{p}{i}", p, (0.9 if i else 0.2,), -1, str(i), bool(i)) for p in "abcdefghijklmnopqrst"
            for i in (0, 1)]
    picks_right, picks_wrong = (sols, "min"), ([ScoredSolution(s.solution_id, s.problem_id, (1 - s.scores[0],), -1,
                                                               s.final_answer, s.is_correct) for s in sols], "min")
    delta, ci = paired_bon_difference([picks_right, picks_wrong], [picks_wrong], 2)
    assert delta == 0.5 and ci == (0.5, 0.5)  # one seed of two picks right on every problem
    mixed = [picks_right[0][:14] + picks_wrong[0][14:]]  # right on 7 of 20 problems
    x = paired_bon_difference([(mixed[0], "min")], [picks_wrong], 2, seed=0)
    assert x[0] == pytest.approx(0.35) and x[1][0] < 0.35 < x[1][1]
    assert x == paired_bon_difference([(mixed[0], "min")], [picks_wrong], 2, seed=0)
    assert paired_bon_difference([], [picks_wrong], 2) == (None, None)
