"""OpenRLHF per-step extras: step scores and spans beside the one reward per sample its protocol carries."""

from __future__ import annotations

import json

import pytest

from prm.rewards import RewardConfig, Rewarder
from prm.rewards.adapters.openrlhf import remote_payload
from prm.rewards.constants import PRM_DIR_ENV, STEPS_ENV
from tests.prm.rewards.test_openrlhf import load_like_openrlhf

QUERIES = ["2+2 =\n2+2 = 4\nbad 9\nAnswer: 4<|im_end|>", "2+2 =\n<pad>"]
PROMPTS = ["2+2 =\n", "2+2 =\n"]


def test_per_step_payload_is_json_with_each_steps_score_and_span(keyword_scorer):
    rewarder = Rewarder(keyword_scorer, RewardConfig(shaping="min", outcome_weight=0.5))
    plain = remote_payload(rewarder, QUERIES, PROMPTS, ["4", "4"])
    payload = remote_payload(rewarder, QUERIES, PROMPTS, ["4", "4"], per_step=True)
    assert json.loads(json.dumps(payload, allow_nan=False)) == payload
    assert {k: payload[k] for k in plain} == plain  # the protocol's keys are unchanged
    assert payload["step_rewards"] == [[0.9, 0.1], []]  # a sample with no step: an empty list
    response = "2+2 = 4\nbad 9\nAnswer: 4<|im_end|>"
    assert [response[s:e] for s, e in payload["step_spans"][0]] == ["2+2 = 4", "bad 9"]
    assert "step_rewards" not in plain


def test_reward_func_adds_steps_only_when_asked(tiny_prm, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(PRM_DIR_ENV, str(tiny_prm))
    reward_func = load_like_openrlhf()
    assert "step_rewards" not in reward_func(QUERIES, PROMPTS, ["4", "4"])
    monkeypatch.setenv(STEPS_ENV, "1")
    out = reward_func(QUERIES, PROMPTS, ["4", "4"])
    assert [len(t) for t in out["step_rewards"]] == [2, 0] and out["rewards"].shape == (2,)
    assert all(0.0 <= x <= 1.0 for x in out["step_rewards"][0].tolist())
