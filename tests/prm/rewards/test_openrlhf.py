"""The OpenRLHF adapter loaded by file path and called as OpenRLHF calls ``reward_func``, and its JSON payload."""

from __future__ import annotations

import importlib.util
import json
import logging
from pathlib import Path

import pytest

import prm.rewards.adapters.openrlhf as openrlhf_adapter
from prm.rewards import RewardConfig, Rewarder
from prm.rewards.adapters.openrlhf import remote_payload, split_query
from prm.rewards.constants import PRM_DIR_ENV, SHAPING_ENV


def load_like_openrlhf():
    """OpenRLHF's loader for a .py remote_rm_url: spec_from_file_location("reward_func", path)."""
    spec = importlib.util.spec_from_file_location("reward_func", openrlhf_adapter.__file__)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.reward_func


@pytest.mark.parametrize("query,prompt,response", [
    ("<s>1 plus 1\nok\nAnswer: 2</s>", "1 plus 1\n", "ok\nAnswer: 2</s>"),
    ("1 plus 1\n1 plus 1\nAnswer: 2", "1 plus 1\n", "1 plus 1\nAnswer: 2"),  # the response repeats the prompt
    # Neither the prompt nor a chat template in the query: the response cannot be told apart (a per-sample error).
    ("ok\nAnswer: 2", "a prompt the tokenizer rewrote", None),
    ("ok", "", None),
    # A templated query whose prompt did not round-trip: the text after the last assistant header.
    ("<|im_start|>user\n1 plus 1<|im_end|>\n<|im_start|>assistant\nok\nAnswer: 2<|im_end|>", "1 plus  1",
     "ok\nAnswer: 2<|im_end|>"),
])
def test_split_query(query, prompt, response):
    assert split_query(query, prompt) == response


def test_reward_func_as_openrlhf_calls_it(tiny_prm: Path, monkeypatch):
    import torch

    monkeypatch.setenv(PRM_DIR_ENV, str(tiny_prm))
    monkeypatch.setenv(SHAPING_ENV, "mean")
    reward_func = load_like_openrlhf()
    prompts = ["1 plus 1\n", "1 plus 1\n", "2 plus 2\n"]
    queries = ["<s>1 plus 1\nok\nAnswer: 2</s>", "<s>1 plus 1\nno\nAnswer: 3</s><pad><pad>", "<s>2 plus 2\n<pad>"]
    out = reward_func(queries, prompts, ["2", "2", "4"])
    assert set(out) == {"rewards", "scores", "extra_logs"}
    assert out["rewards"].shape == out["scores"].shape == (3,)
    assert out["rewards"].dtype == torch.float32
    assert out["scores"].tolist() == [1.0, 0.0, 0.0]  # the outcome: 0/1 for dynamic filtering
    assert out["extra_logs"]["n_steps"].tolist() == [1.0, 1.0, 0.0]
    assert all(v.shape == (3,) for v in out["extra_logs"].values())
    expected = Rewarder(openrlhf_adapter.load_rewarder(tiny_prm).scorer, RewardConfig(shaping="mean")).score(
        ["1 plus 1", "1 plus 1", "2 plus 2"], ["ok\nAnswer: 2", "no\nAnswer: 3", ""], ["2", "2", "4"])
    assert out["rewards"].tolist() == pytest.approx([s.reward for s in expected])


def test_remote_payload_is_json_with_known_values(keyword_scorer):
    rewarder = Rewarder(keyword_scorer, RewardConfig(shaping="min", outcome_weight=0.5))
    payload = remote_payload(rewarder, ["2+2 =\n2+2 = 4\nAnswer: 4<|im_end|>", "2+2 =\nbad\nAnswer: 5"],
                             ["2+2 =\n", "2+2 =\n"], ["4", "4"])
    assert json.loads(json.dumps(payload)) == payload
    assert payload["rewards"] == pytest.approx([0.95, 0.05])
    assert payload["scores"] == [1.0, 0.0]
    assert payload["extra_logs"]["process_reward"] == pytest.approx([0.9, 0.1])
    assert [p for p, _ in keyword_scorer.seen] == ["2+2 =", "2+2 ="]


def test_missing_labels_score_as_wrong_without_raising(keyword_scorer, caplog):
    rewarder = Rewarder(keyword_scorer, RewardConfig(shaping="min", outcome_weight=0.5))
    with caplog.at_level(logging.WARNING):
        payload = remote_payload(rewarder, ["q\n2+2 = 4\nAnswer: 4"], ["q\n"], [""])
    assert payload["rewards"] == pytest.approx([0.45])  # process 0.9 only: no label, outcome 0
    assert "1 of 1 samples have no label" in caplog.text
    prm_only = remote_payload(Rewarder(keyword_scorer, RewardConfig(outcome_weight=0.0)), ["q\nx = 1"], ["q\n"], None)
    assert prm_only["scores"] == [0.9]  # no outcome: the reward clipped to [0, 1]
