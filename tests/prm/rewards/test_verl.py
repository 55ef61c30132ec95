"""The verl adapter loaded by file path and called as verl's reward managers call a custom reward function."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest

import prm.rewards.adapters.verl as verl_adapter
from prm.rewards import RewardConfig, Rewarder
from prm.rewards.constants import PRM_DIR_ENV
from prm.scoring import load_prm

EXTRAS = {"process_reward", "outcome_reward", "n_steps", "min_step_score", "prof_weight", "prof_disagree"}


def load_like_verl(name: str):
    """verl's get_custom_reward_fn: import the file at custom_reward_function.path as "custom_module"."""
    spec = importlib.util.spec_from_file_location("custom_module", verl_adapter.__file__)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, getattr(module, name)


def call_with_reward_kwargs(fn, reward_kwargs: dict, **call_kwargs):
    """verl's _call_with_kwargs: reward_kwargs from the config block merged over the call's kwargs."""
    return fn(**{**call_kwargs, **reward_kwargs})


def test_compute_score_as_the_naive_manager_calls_it(tiny_prm: Path):
    _, compute_score = load_like_verl("compute_score")
    reward_kwargs = {"prm_dir": str(tiny_prm), "shaping": "min", "outcome_weight": 0.5}
    info = {"split": "train", "index": 0, "question": "1 plus 1"}
    right = call_with_reward_kwargs(compute_score, reward_kwargs, data_source="arith",
                                    solution_str="1 plus 1\nok\nAnswer: 2", ground_truth="2", extra_info=info)
    wrong = call_with_reward_kwargs(compute_score, reward_kwargs, data_source="arith",
                                    solution_str="1 plus 1\nok\nAnswer: 3", ground_truth="2", extra_info=info)
    assert set(right) == {"score", "reward_error"} | EXTRAS
    assert right["reward_error"] == 0.0
    assert all(isinstance(v, float) and math.isfinite(v) for v in right.values())
    [expected] = Rewarder(load_prm(tiny_prm), RewardConfig(outcome_weight=0.5)).score(
        ["1 plus 1"], ["1 plus 1\nok\nAnswer: 2"], ["2"])
    assert right["score"] == pytest.approx(expected.reward)
    # Same steps (the answer line is not a step), so the scores differ by exactly the outcome weight.
    assert right["process_reward"] == pytest.approx(wrong["process_reward"])
    assert right["score"] - wrong["score"] == pytest.approx(0.5)
    assert (right["outcome_reward"], wrong["outcome_reward"], right["n_steps"]) == (1.0, 0.0, 2.0)


def test_batch_manager_form_matches_one_at_a_time(tiny_prm: Path):
    module, compute_score_batch = load_like_verl("compute_score_batch")
    kwargs = {"prm_dir": str(tiny_prm), "shaping": "clip"}
    solutions = ["1 plus 1\nok\nAnswer: 2", "no\nAnswer: 5", ""]
    infos = [{"question": "1 plus 1"}, {"problem": "2 plus 3"}, None]
    golds = ["2", "5", "1"]
    batch = compute_score_batch(data_sources=["a"] * 3, solution_strs=solutions, ground_truths=golds,
                                extra_infos=infos, **kwargs)
    singles = [module.compute_score("a", s, g, i, **kwargs) for s, g, i in zip(solutions, golds, infos, strict=True)]
    assert [set(b) for b in batch] == [set(s) for s in singles]
    assert all(b[k] == pytest.approx(s[k], abs=1e-5) for b, s in zip(batch, singles, strict=True) for k in b)
    assert batch[2]["n_steps"] == 0.0 and batch[2]["outcome_reward"] == 0.0  # empty response: a defined reward


def test_prm_folder_from_the_environment(tiny_prm: Path, monkeypatch):
    _, compute_score = load_like_verl("compute_score")
    monkeypatch.setenv(PRM_DIR_ENV, str(tiny_prm))
    assert compute_score("a", "ok\nAnswer: 2", "2", {"question": "1 plus 1"})["outcome_reward"] == 1.0
    monkeypatch.delenv(PRM_DIR_ENV)
    with pytest.raises(ValueError, match=f"set reward_kwargs.prm_dir .* or export {PRM_DIR_ENV}"):
        compute_score("a", "ok", "2")


@pytest.mark.parametrize("extra_info,problem_key,problem", [
    ({"question": "2+2", "problem": "other"}, None, "2+2"),
    ({"problem": "2+2"}, None, "2+2"),
    ({"prompt": [{"role": "user", "content": "2+2"}]}, None, "2+2"),  # chat messages, as verl stores prompts
    ({"query": "2+2"}, "query", "2+2"),
])
def test_problem_comes_from_extra_info(keyword_scorer, monkeypatch, extra_info, problem_key, problem):
    monkeypatch.setattr(verl_adapter, "load_rewarder", lambda prm_dir, config: Rewarder(keyword_scorer, config))
    kwargs = {"prm_dir": "unused", "problem_key": problem_key} if problem_key else {"prm_dir": "unused"}
    result = verl_adapter.compute_score("gsm8k", "2+2 = 4\nAnswer: 4", ["4"], extra_info, **kwargs)
    assert keyword_scorer.seen == [(problem, ["2+2 = 4"])]
    assert result["score"] == pytest.approx(0.95)  # one-element list of answers read as the answer
