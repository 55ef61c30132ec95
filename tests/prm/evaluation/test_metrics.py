"""Bootstrap intervals over problems (prm.metrics.stats) on cases whose answer is known by hand."""

from __future__ import annotations

import pytest

from prm.metrics import bootstrap_mean_ci, paired_bootstrap_diff_ci
from prm.search.report import accuracy_ci


@pytest.mark.parametrize("values", [[0.0] * 5, [1.0] * 3, [0.25] * 7, [0.6]])
def test_constant_values_give_a_zero_width_interval(values):
    low, high = bootstrap_mean_ci(values)
    assert low == high == pytest.approx(values[0])


def test_a_seed_repeats_and_another_seed_changes_the_interval():
    values = [1.0, 0.0, 0.5, 0.25, 0.75, 1.0, 0.0, 0.0, 1.0, 0.5] * 3
    assert bootstrap_mean_ci(values, seed=1) == bootstrap_mean_ci(values, seed=1)
    assert bootstrap_mean_ci(values, seed=1) != bootstrap_mean_ci(values, seed=2)
    low, high = bootstrap_mean_ci(values)
    assert low < sum(values) / len(values) < high


def test_two_problems_give_the_percentiles_of_their_three_possible_means():
    """Resampling two problems (0 and 1) gives means 0, 0.5, 1 with chances 1/4, 1/2, 1/4: the 2.5th and
    97.5th percentiles of 2,000 replicates are the extremes."""
    assert bootstrap_mean_ci([0.0, 1.0]) == (0.0, 1.0)


def test_paired_difference_of_identical_arrays_is_exactly_zero():
    a = [0.0, 0.25, 1.0, 0.5, 0.75]
    assert paired_bootstrap_diff_ci(a, list(a)) == (0.0, 0.0)


def test_paired_difference_is_a_minus_b_and_resamples_problems_together():
    """Each problem gains 0.25 (its after minus its before), while the problems differ a lot: the paired
    interval is the constant gain, not the width of two unpaired intervals."""
    before = [0.0, 0.5, 0.25, 0.75]
    after = [b + 0.25 for b in before]
    assert paired_bootstrap_diff_ci(after, before) == pytest.approx((0.25, 0.25))
    assert paired_bootstrap_diff_ci(before, after) == pytest.approx((-0.25, -0.25))
    low, high = bootstrap_mean_ci(after)
    assert high - low > 0.25


def test_bad_inputs_say_what_to_pass():
    with pytest.raises(ValueError, match="one value per problem"):
        bootstrap_mean_ci([])
    with pytest.raises(ValueError, match="same problem order"):
        paired_bootstrap_diff_ci([1.0], [1.0, 0.0])


def test_search_accuracy_ci_is_the_shared_helper():
    correct = [True, False, True, True, False] * 4
    assert accuracy_ci(correct, seed=3) == bootstrap_mean_ci(correct, seed=3)
    with pytest.raises(ValueError, match="no graded problems"):
        accuracy_ci([])
