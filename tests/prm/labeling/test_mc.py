"""MC labeler on the scripted oracle: labels, early stop, adaptive N, batching, costs."""

from __future__ import annotations

import pytest

from prm.labeling import MCConfig, get_labeler
from prm.labeling.mc import MCLabeler

STEPS = ["ok", "ok", "bad", "ok"]  # first error at step 2


def _by_step(run, sid):
    return {lb.step_idx: lb for lb in run.labels if lb.solution_id == sid}


def test_full_mc_labels_every_step_in_one_call(oracle_cls, sampler_of, solution):
    sols = [solution(f"s{i}", f"p{i}", STEPS) for i in range(5)]
    sampler = sampler_of(oracle_cls(pattern=(True, False, False, False)))
    run = MCLabeler(MCConfig(n_rollouts=8)).label(sols, sampler)
    assert run.sampler_calls == 1 and sampler.call_sizes == [20]  # 5 solutions x 4 steps, one batch
    labels = _by_step(run, "s0")
    assert [lb.soft_label for lb in labels.values()] == [0.25, 0.25, 0.0, 0.0]
    assert [lb.hard_label for lb in labels.values()] == [True, True, False, False]
    assert {lb.status for lb in labels.values()} == {"labeled"}
    assert {lb.first_error for lb in labels.values()} == {2}
    assert all(lb.n_rollouts == 8 for lb in labels.values())
    assert run.cost_rollouts == 5 * 4 * 8 and run.cost_tokens == run.cost_rollouts * 10
    assert len(run.new_rollouts) == run.cost_rollouts


def test_early_stop_stops_at_first_zero_and_labels_rest_by_convention(oracle_cls, sampler_of, solution):
    sols = [solution("a", "p0", STEPS), solution("b", "p1", ["ok", "bad", "ok", "ok", "ok"])]
    sampler = sampler_of(oracle_cls())
    run = get_labeler("mc_early_stop").label(sols, sampler)
    a, b = _by_step(run, "a"), _by_step(run, "b")
    assert [a[k].status for k in range(4)] == ["labeled", "labeled", "labeled", "by_convention"]
    assert [b[k].status for k in range(5)] == ["labeled", "labeled"] + ["by_convention"] * 3
    assert a[3].hard_label is False and a[3].soft_label is None and a[3].n_rollouts == 0
    assert a[0].first_error == 2 and b[0].first_error == 1
    # one round per step position, both solutions in the same call until b stops
    assert sampler.call_sizes == [2, 2, 1]
    assert run.cost_rollouts == (3 + 2) * 8


@pytest.mark.parametrize(
    "pattern, expected_n, calls",
    [
        ((True,), [2, 2, 8, 8], 4),  # alive steps decided by the first round of 2; dead ones go to N = 8
        ((False, False, False, True), [4, 4, 8, 8], 4),  # first success in round 2
        ((False,), [8, 8, 8, 8], 4),  # never decided early
    ],
)
def test_adaptive_n_stops_once_a_rollout_is_correct(oracle_cls, sampler_of, solution, pattern, expected_n, calls):
    sampler = sampler_of(oracle_cls(pattern=pattern))
    run = MCLabeler(MCConfig(n_rollouts=8, adaptive_round=2)).label([solution("a", "p", STEPS)], sampler)
    labels = _by_step(run, "a")
    assert [labels[k].n_rollouts for k in range(4)] == expected_n
    assert sampler.calls == calls  # rounds, each batching every undecided step
    fixed = MCLabeler(MCConfig(n_rollouts=8)).label([solution("a", "p", STEPS)], sampler_of(oracle_cls(pattern)))
    assert [lb.hard_label for lb in run.labels] == [lb.hard_label for lb in fixed.labels]


def test_shared_prefix_is_sampled_and_charged_once(oracle_cls, sampler_of, solution):
    sols = [solution("a", "p", ["ok", "x1"]), solution("b", "p", ["ok", "x2"])]
    sampler = sampler_of(oracle_cls())
    run = MCLabeler().label(sols, sampler)
    assert len(sampler.oracle.asked) == 3  # ("ok",) once, then both second steps
    assert (sampler.fresh_rollouts, sampler.reused_rollouts) == (3 * 8, 8)  # b's first step is a's, from the cache
    assert run.cost_rollouts == 3 * 8 == sum(lb.cost_rollouts for lb in run.labels)
    assert _by_step(run, "b")[0].n_rollouts == 8 and _by_step(run, "b")[0].cost_rollouts == 0


def test_skip_and_rows_match_step_labels_schema(oracle_cls, sampler_of, solution):
    from warehouse.schemas import STEP_LABELS

    sols = [solution("a", "p", STEPS), solution("b", "q", STEPS)]
    run = MCLabeler().label(sols, sampler_of(oracle_cls()), skip={"a"})
    assert run.solution_ids == ("b",)
    row = run.rows()[0]
    expected = {f.name for f in STEP_LABELS} - {"run_id", "created_at", "source", "day"}
    assert set(row) == expected


@pytest.mark.parametrize(
    "kwargs, match",
    [({"n_rollouts": 0}, "n_rollouts=0"), ({"n_rollouts": 4, "adaptive_round": 5}, "adaptive_round=5")],
)
def test_config_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        MCConfig(**kwargs)


@pytest.mark.parametrize("monotone, hard, first_error", [(True, [True, True, False, False], 2),
                                                          (False, [False, True, False, False], 0)])
def test_monotone_hard_labels_follow_the_latest_prefix_that_reached_gold(oracle_cls, sampler_of, solution,
                                                                         monotone, hard, first_error):
    # a weak policy: every rollout from step 0 fails although step 1's prefix still reaches gold
    oracle = oracle_cls(pattern=(True,), mc_overrides={("ok",): (False,), ("ok", "ok", "ok"): (False,)})
    run = MCLabeler(MCConfig(n_rollouts=4, monotone=monotone)).label([solution("a", "p", ["ok"] * 3 + ["bad"])],
                                                                     sampler_of(oracle))
    labels = _by_step(run, "a")
    assert [labels[k].hard_label for k in range(4)] == hard
    assert [labels[k].soft_label for k in range(4)] == [0.0, 1.0, 0.0, 0.0]  # raw MC either way
    assert labels[0].first_error == first_error
