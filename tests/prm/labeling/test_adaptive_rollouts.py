"""Adaptive rollouts (MC and OmegaPRM) and OmegaPRM's start hints, on the scripted oracle of conftest.py."""

from __future__ import annotations

import random

import pytest

from prm.labeling import MCConfig, OmegaPRMConfig
from prm.labeling.mc import MCLabeler
from prm.labeling.omegaprm import OmegaPRMLabeler
from prm.labeling.sampler import CachedRolloutSampler

STEPS = ["a", "b", "bad", "c"]  # first error at step 2
SETTLED_SPLIT = {("a",): (True,), ("a", "b"): (True, False)}  # step 0 always reaches gold, step 1 half the time
WRONG_AT_5 = ["ok"] * 5 + ["bad", "ok", "ok"]
GOOD = ["ok"] * 8
ADAPTIVE = {"adaptive": True, "adaptive_min": 4, "adaptive_max": 16}


def _by_step(run, sid):
    return {lb.step_idx: lb for lb in run.labels if lb.solution_id == sid}


def test_mc_adaptive_stops_a_settled_step_and_tops_up_a_split_one(oracle_cls, sampler_of, solution):
    sampler = sampler_of(oracle_cls(mc_overrides=SETTLED_SPLIT))
    run = MCLabeler(MCConfig(**ADAPTIVE)).label([solution("s", "p", STEPS)], sampler)
    labels = _by_step(run, "s")
    # settled: all right (step 0) or all wrong (dead steps 2, 3) after 4; split (step 1): topped up to 16
    assert [labels[k].n_rollouts for k in range(4)] == [4, 16, 4, 4]
    assert [labels[k].soft_label for k in range(4)] == [1.0, 0.5, 0.0, 0.0]
    assert sampler.call_sizes == [4, 1]  # round 1 holds every step, round 2 only the split one
    assert run.cost_rollouts == 28 == sum(lb.cost_rollouts for lb in run.labels)
    assert run.cost_tokens == 28 * 10
    fixed = MCLabeler(MCConfig(n_rollouts=8)).label([solution("s", "p", STEPS)],
                                                   sampler_of(oracle_cls(mc_overrides=SETTLED_SPLIT)))
    assert [lb.hard_label for lb in run.labels] == [lb.hard_label for lb in fixed.labels]  # same rule, same labels
    assert fixed.cost_rollouts == 32 > run.cost_rollouts


@pytest.mark.parametrize("pattern, expected", [((True,), [4, 4, 4, 4]), ((True, False), [16, 16, 4, 4])])
def test_mc_adaptive_spends_by_how_settled_each_step_is(oracle_cls, sampler_of, solution, pattern, expected):
    run = MCLabeler(MCConfig(**ADAPTIVE)).label([solution("s", "p", STEPS)], sampler_of(oracle_cls(pattern)))
    assert [lb.n_rollouts for lb in run.labels] == expected
    assert [lb.hard_label for lb in run.labels] == [True, True, False, False]


def test_mc_adaptive_with_early_stop_and_equal_bounds(oracle_cls, sampler_of, solution):
    sampler = sampler_of(oracle_cls(mc_overrides=SETTLED_SPLIT))
    run = MCLabeler(MCConfig(early_stop=True, **ADAPTIVE)).label([solution("s", "p", STEPS)], sampler)
    labels = _by_step(run, "s")
    assert [labels[k].n_rollouts for k in range(4)] == [4, 16, 4, 0] and labels[3].status == "by_convention"
    flat = MCLabeler(MCConfig(adaptive=True, adaptive_min=6, adaptive_max=6)).label(
        [solution("s", "p", STEPS)], sampler_of(oracle_cls(mc_overrides=SETTLED_SPLIT)))
    assert [lb.n_rollouts for lb in flat.labels] == [6] * 4 and flat.sampler_calls == 1


def test_omegaprm_adaptive_tops_up_split_states_only(oracle_cls, sampler_of, solution):
    sols = [solution("good", "p", GOOD), solution("w", "p", WRONG_AT_5)]
    sampler = sampler_of(oracle_cls(pattern=(True, False)))
    run = OmegaPRMLabeler(OmegaPRMConfig(**ADAPTIVE)).label(sols, sampler)
    # the binary search of test_omegaprm (4 alive, 6 dead, 5 alive): the alive ones split and are topped up
    assert [len(s) for s in sampler.oracle.asked] == [4, 4, 6, 5, 5]
    w = _by_step(run, "w")
    assert {k: lb.n_rollouts for k, lb in w.items() if lb.status == "labeled"} == {3: 16, 4: 16, 5: 4}
    assert {lb.first_error for lb in w.values()} == {5}
    assert run.cost_rollouts == 16 + 4 + 16 == sum(lb.cost_rollouts for lb in run.labels)


def _omega_run(oracle_cls, sampler_of, solution, hints, config=None):
    sols = [solution("good", "p", GOOD), solution("w", "p", WRONG_AT_5)]
    sampler = sampler_of(oracle_cls(pattern=(True, False)))
    return OmegaPRMLabeler(config).label(sols, sampler, start_hints=hints), sampler


def test_a_right_start_hint_finds_the_same_first_error_with_fewer_rollouts(oracle_cls, sampler_of, solution):
    plain, _ = _omega_run(oracle_cls, sampler_of, solution, None)
    hinted, sampler = _omega_run(oracle_cls, sampler_of, solution, {"w": 5})
    assert [len(s) for s in sampler.oracle.asked] == [6, 5]  # e + 1 steps dead, e steps alive: done
    assert _by_step(hinted, "w")[0].first_error == _by_step(plain, "w")[0].first_error == 5
    assert hinted.cost_rollouts == 16 < plain.cost_rollouts == 24
    assert [lb.hard_label for lb in hinted.labels if lb.solution_id == "w"] == [True] * 5 + [False] * 3


@pytest.mark.parametrize("hint", [-1, 0, 1, 2, 3, 4, 5, 6, 7, 40])
def test_any_start_hint_changes_where_the_search_starts_not_what_it_finds(oracle_cls, sampler_of, solution, hint):
    run, sampler = _omega_run(oracle_cls, sampler_of, solution, {"w": hint})
    assert _by_step(run, "w")[0].first_error == 5
    assert all(lb.first_error == -1 for lb in _by_step(run, "good").values())
    if hint < 0:  # the PRM saw no error: no hint, the plain search
        assert [len(s) for s in sampler.oracle.asked] == [4, 6, 5]


def test_start_hints_must_be_step_indices(oracle_cls, sampler_of, solution):
    with pytest.raises(TypeError, match="start hint of 'w'"):
        _omega_run(oracle_cls, sampler_of, solution, {"w": "5"})


def _seeded_source(targets, n, seed):
    """A stand-in policy: each rollout reaches gold with a chance set by its prefix, drawn from the call's seed."""
    rows = []
    for t in targets:
        rng = random.Random(f"{seed}/{t.prefix_hash}")
        p = 0.0 if "bad" in t.prefix else 0.5
        for j in range(n):
            ok = rng.random() < p
            rows.append({"rollout_id": f"{t.prefix_hash}-{seed}-{j}", "prefix_hash": t.prefix_hash, "rollout_idx": j,
                         "text": "ok\nAnswer: 1" if ok else "ok\nbad\nAnswer: 0", "is_correct": ok,
                         "finish_reason": "stop", "completion_tokens": 7 + j})
    return rows


@pytest.mark.parametrize("labeler", [MCLabeler(MCConfig(**ADAPTIVE)), OmegaPRMLabeler(OmegaPRMConfig(**ADAPTIVE))],
                         ids=["mc", "omegaprm"])
def test_a_fixed_seed_repeats(solution, labeler):
    sols = [solution(f"s{i}", f"p{i % 2}", WRONG_AT_5 if i % 2 else GOOD) for i in range(4)]

    def once():
        run = type(labeler)(labeler.config).label(sols, CachedRolloutSampler(_seeded_source, seed=11))
        return run.rows(), run.cost_rollouts, run.cost_tokens

    assert once() == once()


@pytest.mark.parametrize("kwargs, match", [
    ({"adaptive": True, "adaptive_round": 2}, "set one of them"),
    ({"adaptive_min": 8, "adaptive_max": 4}, "adaptive_min=8 is above adaptive_max=4"),
    ({"adaptive_max": 5000}, r"adaptive_max=5000 must be in \[1, 1024\]"),
    ({"adaptive_min": 0}, r"adaptive_min=0 must be in \[1, 1024\]"),
])
def test_mc_adaptive_config_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        MCConfig(**kwargs)


def test_omegaprm_adaptive_config_validation():
    with pytest.raises(ValueError, match="below adaptive_min=4"):
        OmegaPRMConfig(max_rollouts=3, k=2, **ADAPTIVE)
    assert OmegaPRMConfig(max_rollouts=4, k=8, **ADAPTIVE).first_want == 4
