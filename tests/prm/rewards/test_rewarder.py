"""The outcome reward and the Rewarder: right/wrong/no answer, truncated and padded completions, caching."""

from __future__ import annotations

from pathlib import Path

import pytest

from prm.rewards import RewardConfig, Rewarder, cached_scorer, load_rewarder
from prm.rewards.outcome import outcome_rewards
from prm.scoring import ScorerConfig


@pytest.mark.parametrize("completion,gold,truncated,expected", [
    ("2+2 = 4\nAnswer: 4", "4", False, 1.0),
    ("2+2 = 5\nAnswer: 5", "4", False, 0.0),
    ("2+2 = 4", "4", False, 0.0),  # no final answer
    ("2+2 = 4\nAnswer: 4", "4", True, 0.0),  # cut off by the length limit
    (r"so $\boxed{\frac{1}{2}}$", "0.5", False, 1.0),  # Math-Verify equivalence
    ("Answer: 4", None, False, None),  # no gold answer: no outcome
])
def test_outcome_rewards(completion, gold, truncated, expected):
    assert outcome_rewards([completion], [gold], [truncated]) == [expected]


def test_outcome_rewards_rejects_misaligned_inputs():
    with pytest.raises(ValueError, match="2 completions need as many gold answers"):
        outcome_rewards(["a", "b"], ["1"])


@pytest.mark.parametrize("completion,expected", [
    ("2+2 = 4\nAnswer: 4", 0.95),  # process 0.9, right: 0.5 * 0.9 + 0.5
    ("2+2 = 4\nAnswer: 4<|im_end|><pad><pad>", 0.95),  # padding neither a step nor part of the answer
    ("bad 2+2 = 4\nAnswer: 4", 0.55),  # weak step, right answer
    ("2+2 = 4\nAnswer: 5", 0.45),  # good step, wrong answer
    ("Answer: 4", 0.5),  # no steps: process NO_STEP_SCORE = 0, the outcome still counts
    ("", 0.0),  # empty: no steps, no answer
    ("<pad><pad>", 0.0),
])
def test_rewarder_defined_rewards(keyword_scorer, completion, expected):
    rewarder = Rewarder(keyword_scorer, RewardConfig(shaping="min", outcome_weight=0.5))
    [scored] = rewarder.score(["2+2"], [completion], ["4"])
    assert scored.reward == pytest.approx(expected)


def test_rewarder_truncated_keeps_the_process_reward(keyword_scorer):
    rewarder = Rewarder(keyword_scorer, RewardConfig(shaping="min", outcome_weight=0.5))
    full, cut = rewarder.score(["q", "q"], ["2+2 = 4\nAnswer: 4"] * 2, ["4", "4"], truncated=[False, True])
    assert (full.shaped.process, full.shaped.outcome) == (0.9, 1.0)
    assert (cut.shaped.process, cut.shaped.outcome, cut.reward) == (0.9, 0.0, pytest.approx(0.45))


def test_rewarder_prm_only_needs_no_gold(keyword_scorer):
    rewarder = Rewarder(keyword_scorer, RewardConfig(shaping="sum", outcome_weight=0.0))
    [scored] = rewarder.score(["q"], ["a = 1\nbad b = 2"])
    assert scored.reward == pytest.approx(1.0)
    assert scored.shaped.outcome is None
    assert scored.steps.steps == ["a = 1", "bad b = 2"]


def test_rewarder_with_outcome_but_no_gold_says_what_to_do(keyword_scorer):
    with pytest.raises(ValueError, match="pass the gold answer, or use a PRM-only reward"):
        Rewarder(keyword_scorer, RewardConfig(outcome_weight=0.5)).score(["q"], ["a = 1"])


def test_scorer_is_loaded_once_per_process_and_config(tiny_prm: Path):
    first = cached_scorer(tiny_prm)
    assert cached_scorer(str(tiny_prm)) is first
    assert load_rewarder(tiny_prm, RewardConfig(shaping="clip")).scorer is first
    assert cached_scorer(tiny_prm, ScorerConfig(batch_size=2)) is not first
