"""Shaping functions, the outcome mix, the PROF filter and reward_for on hand-computed cases."""

from __future__ import annotations

import math

import pytest

from prm.rewards import SHAPINGS, RewardConfig, reward_for
from prm.rewards.config import SHAPING_NAMES
from prm.rewards.constants import NO_STEP_SCORE
from prm.rewards.shaping import clip, combine, delta, last, mean, min_form, prof_filter, soft_min, total


@pytest.mark.parametrize("scores,expected", [
    ([0.9, 0.2, 0.7], 0.2),
    ([0.5], 0.5),
    ([1.0, 1.0], 1.0),
    ([], 0.0),  # no steps: one step of NO_STEP_SCORE
])
def test_min_form(scores, expected):
    assert min_form(scores) == expected


@pytest.mark.parametrize("scores,temperature,expected", [
    ([0.0, 1.0], 1.0, 1 / (1 + math.e)),  # weights e^0 : e^-1, so sum w r = e^-1 / (1 + e^-1)
    ([0.2, 0.9], 0.1, (0.2 + 0.9 * math.exp(-7)) / (1 + math.exp(-7))),  # w = 1 : e^-7
    ([0.5, 0.5, 0.5], 0.1, 0.5),  # equal steps: any weighting gives the common value
    ([0.0, 1.0], 1e6, 0.5),  # a huge temperature is the mean
    ([0.3, 0.8], 1e-4, 0.3),  # a tiny one is the min, with no overflow
    ([], 0.1, 0.0),
])
def test_soft_min(scores, temperature, expected):
    assert soft_min(scores, temperature) == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize("scores,eta,expected", [
    ([0.9, 0.3, 0.1], 0.5, -0.6),  # 0 + (0.3 - 0.5) + (0.1 - 0.5)
    ([0.8, 0.7], 0.5, 0.0),  # every step above eta costs nothing
    ([0.5], 0.8, -0.3),
    ([], 0.5, -0.5),  # no steps: one step of 0 costs eta
])
def test_clip(scores, eta, expected):
    assert clip(scores, eta) == pytest.approx(expected)


@pytest.mark.parametrize("scores,per_step,expected_sum", [
    ([0.9, 0.6, 0.8], [0.3, -0.2, 0.8], 0.9),  # 0.9-0.6, 0.6-0.8, last kept; the sum telescopes to r_0
    ([0.4], [0.4], 0.4),
    ([0.2, 0.2], [0.0, 0.2], 0.2),
    ([], [], 0.0),
])
def test_delta(scores, per_step, expected_sum):
    values, summed = delta(scores)
    assert values == pytest.approx(per_step)
    assert summed == pytest.approx(expected_sum)


@pytest.mark.parametrize("fn,scores,expected", [
    (total, [0.5, 0.25], 0.75),
    (total, [], 0.0),
    (mean, [0.5, 0.25], 0.375),
    (mean, [], 0.0),
    (last, [0.5, 0.25], 0.25),
    (last, [], 0.0),
])
def test_naive_forms(fn, scores, expected):
    assert fn(scores) == pytest.approx(expected)


@pytest.mark.parametrize("shaping,scores,expected", [
    ("min", [0.9, 0.2], 0.2),
    ("soft_min", [0.0, 1.0], 1 / (1 + math.exp(10))),  # T = 0.1: weights 1 : e^-10
    ("clip", [0.9, 0.3], -0.2),
    ("delta", [0.9, 0.3], 0.9),
    ("clip_delta", [0.3, 0.9], -0.2),  # clipped steps (-0.2, 0): the sum telescopes to the first
    ("sum", [0.9, 0.3], 1.2),
    ("mean", [0.9, 0.3], 0.6),
    ("last", [0.9, 0.3], 0.3),
])
def test_registry_uses_config(shaping, scores, expected):
    assert SHAPINGS[shaping](scores, RewardConfig(shaping=shaping)) == pytest.approx(expected)


def test_registry_and_config_name_the_same_shapings():
    assert tuple(SHAPINGS) == SHAPING_NAMES


@pytest.mark.parametrize("shaping", SHAPING_NAMES)
def test_no_steps_never_beats_one_step(shaping):
    """Writing nothing is shaped as one certainly-bad step: never above any one-step completion."""
    config = RewardConfig(shaping=shaping)
    empty = SHAPINGS[shaping]([], config)
    assert empty == pytest.approx(SHAPINGS[shaping]([NO_STEP_SCORE], config))
    assert all(empty <= SHAPINGS[shaping]([x], config) + 1e-12 for x in (0.0, 0.3, 0.6, 1.0))


@pytest.mark.parametrize("process,outcome,weight,expected", [
    (0.4, 1.0, 0.5, 0.7),
    (0.4, 0.0, 0.5, 0.2),
    (-0.6, 1.0, 0.25, -0.2),  # 0.75 * -0.6 + 0.25
    (0.4, 1.0, 0.0, 0.4),  # PRM only
    (0.4, 0.0, 1.0, 0.0),  # outcome only
])
def test_combine(process, outcome, weight, expected):
    assert combine(process, outcome, weight) == pytest.approx(expected)


@pytest.mark.parametrize("scores,outcome,flag", [
    ([0.9, 0.2], 1.0, "right_answer_low_step"),
    ([0.9, 0.6], 1.0, "agree"),
    ([0.9, 0.8], 0.0, "wrong_answer_all_high"),
    ([0.9, 0.2], 0.0, "agree"),
    ([], 1.0, "right_answer_low_step"),  # a bare answer has no step to vouch for it
    ([], 0.0, "agree"),
    ([0.5], 1.0, "agree"),  # thresholds are strict: 0.5 is not below 0.5
    ([0.5], 0.0, "agree"),  # nor above it
])
def test_prof_filter(scores, outcome, flag):
    verdict = prof_filter(scores, outcome, low=0.5, high=0.5, weight=0.25)
    assert verdict.flag == flag
    assert verdict.weight == (1.0 if flag == "agree" else 0.25)


@pytest.mark.parametrize("config,scores,outcome,expected", [
    (RewardConfig(shaping="min", outcome_weight=0.5), [0.9, 0.4], 1.0, 0.7),
    (RewardConfig(shaping="sum", outcome_weight=0.0), [0.9, 0.4], 0.0, 1.3),
    (RewardConfig(shaping="clip", outcome_weight=0.5), [0.9, 0.3, 0.1], 1.0, 0.2),  # 0.5 * -0.6 + 0.5
    (RewardConfig(shaping="mean", outcome_weight=0.25), [0.5, 0.25], 0.0, 0.28125),  # 0.75 * 0.375
    (RewardConfig(shaping="last", outcome_weight=1.0), [0.9, 0.1], 1.0, 1.0),
    (RewardConfig(shaping="min", outcome_weight=0.5), [], 1.0, 0.5),  # no steps: process 0, outcome counts
    (RewardConfig(shaping="clip", outcome_weight=0.5), [], 1.0, 0.25),  # 0.5 * -0.5 + 0.5
    (RewardConfig(shaping="min", outcome_weight=0.0), [], None, 0.0),  # PRM only, no gold answer
    (RewardConfig(prof_filter=True, prof_weight=0.5), [0.9, 0.4], 1.0, 0.35),  # right, weak step: 0.7 * 0.5
    (RewardConfig(prof_filter=True, prof_weight=0.5), [0.9, 0.8], 0.0, 0.2),  # wrong, all high: 0.4 * 0.5
    (RewardConfig(prof_filter=True, prof_weight=0.5), [0.9, 0.8], 1.0, 0.9),  # agree: untouched
])
def test_reward_for(config, scores, outcome, expected):
    shaped = reward_for(config, scores, outcome)
    assert shaped.reward == pytest.approx(expected)
    assert shaped.n_steps == len(scores)
    assert shaped.min_step_score == min_form(scores)


def test_reward_for_logs_every_part():
    shaped = reward_for(RewardConfig(prof_filter=True, prof_weight=0.5), [0.9, 0.4], 1.0)
    assert shaped.extras() == {"process_reward": 0.4, "outcome_reward": 1.0, "n_steps": 2.0, "min_step_score": 0.4,
                               "prof_weight": 0.5, "prof_disagree": 1.0}
    assert shaped.prof_flag == "right_answer_low_step"


@pytest.mark.parametrize("config", [RewardConfig(outcome_weight=0.5), RewardConfig(outcome_weight=0, prof_filter=True)])
def test_reward_for_needs_an_outcome_when_the_config_uses_one(config):
    with pytest.raises(ValueError, match=r"no outcome reward .* pass the gold answer"):
        reward_for(config, [0.9], None)


@pytest.mark.parametrize("kwargs,match", [
    ({"shaping": "summed"}, "shaping='summed' is not one of"),
    ({"temperature": 0}, "temperature=0.0 must be > 0"),
    ({"outcome_weight": -0.1}, r"outcome_weight=-0.1 must be in \[0, 1\]"),
    ({"prof_weight": 2}, r"prof_weight=2.0 must be in \[0, 1\]"),
    ({"prof_low": 1.5}, "P\\(good\\) thresholds"),
    ({"eta": float("nan")}, "eta=nan must be a finite number"),
    ({"eta": "0.5"}, "eta='0.5' must be a finite number"),
])
def test_config_rejects(kwargs, match):
    with pytest.raises(ValueError, match=match):
        RewardConfig(**kwargs)


def test_config_overrides_take_known_fields_only():
    config = RewardConfig().with_overrides({"shaping": "clip", "eta": 1, "pad_texts": ["<pad>"], "data_source": "x"})
    assert (config.shaping, config.eta, config.pad_texts) == ("clip", 1.0, ("<pad>",))
    assert hash(config) == hash(RewardConfig(shaping="clip", eta=1.0, pad_texts=("<pad>",)))
