"""Process credit that does not pay for fewer steps (PURE's soft min-form credit with a per-token baseline, and
Clip-Delta), on hand-built groups: merging two steps into one no longer raises a completion's advantage."""

from __future__ import annotations

import math

import pytest

from prm.rewards.shaping import clip, soft_min
from prm.rl.config import PROCESS_ARMS
from prm.rl.constants import PROCESS, PROCESS_CLIP_DELTA, PROCESS_PURE
from prm.rl.credit import pure_step_rewards, soft_min_weights, step_lengths
from prm.rl.process_grpo import ProcessConfig, process_advantage_matrix

# One group of four completions, 20 step tokens each and 25 tokens in all (an answer line after the steps).
# Completion 0 writes its work as two steps both scored 0.4 (ending at tokens 9 and 19); MERGED writes the same
# tokens as one step ending at token 19, scored the same. The other three completions are the same in both groups.
OTHERS_SCORES = [[0.9, 0.8], [0.7], [0.9, 0.9, 0.9]]
OTHERS_ENDS = [[9, 19], [19], [6, 13, 19]]
SPLIT = ([[0.4, 0.4], *OTHERS_SCORES], [[9, 19], *OTHERS_ENDS])
MERGED = ([[0.4], *OTHERS_SCORES], [[19], *OTHERS_ENDS])
LENGTH, WIDTH = 25, 25


def _first_token_advantage(group: tuple[list, list], process: ProcessConfig) -> float:
    """Completion 0's advantage at its first token: the return the policy gradient credits to the whole
    completion (every step's reward summed)."""
    scores, ends = group
    matrix = process_advantage_matrix(scores, ends, [LENGTH] * 4, 4, WIDTH, process)
    return float(matrix[0, 0])


def test_deepseekmath_credit_pays_for_merging_steps():
    # the failure the new credit fixes: two below-average steps cost twice, one merged step once
    process = PROCESS_ARMS[PROCESS]
    assert _first_token_advantage(MERGED, process) > _first_token_advantage(SPLIT, process) + 0.1


@pytest.mark.parametrize("arm", [PROCESS_PURE, PROCESS_CLIP_DELTA])
def test_merging_two_steps_no_longer_raises_the_advantage(arm: str):
    process = PROCESS_ARMS[arm]
    split, merged = _first_token_advantage(SPLIT, process), _first_token_advantage(MERGED, process)
    assert merged <= split + 1e-9
    assert merged == pytest.approx(split, abs=1e-9)  # the same work, scored the same: the same credit


def test_pure_charges_a_baseline_per_token_not_per_step():
    # completion 0 and 1 have the same credit per token; 0 wrote it as four short steps, 1 as one long one
    rewards = pure_step_rewards([[0.5] * 4, [0.5], [0.9]], [[5] * 4, [20], [20]], 0.1)
    assert sum(rewards[0]) == pytest.approx(sum(rewards[1]))
    # the better completion gets the positive share; each step pays for its own tokens only
    assert sum(rewards[2]) > 0 > sum(rewards[0])
    assert rewards[0] == pytest.approx([rewards[0][0]] * 4)


def test_soft_min_credit_sums_to_the_soft_min_shaping():
    scores = [0.9, 0.2, 0.7]
    weights = soft_min_weights(scores, 0.1)
    assert sum(weights) == pytest.approx(1.0)
    assert sum(w * s for w, s in zip(weights, scores, strict=True)) == pytest.approx(soft_min(scores, 0.1))
    assert max(weights) == weights[1]  # the weakest step carries the credit


def test_clip_delta_return_is_each_steps_clipped_score():
    scores, ends = [[0.9, 0.3, 0.6], [0.2]], [[2, 5, 8], [8]]
    matrix = process_advantage_matrix(scores, ends, [10, 10], 2, 10, ProcessConfig(credit="clip_delta"))
    base = (clip([0.9], 0.5) + clip([0.2], 0.5)) / 2  # the group's mean first-step clipped score
    # the first step's tokens carry the clipped first score (less the baseline), later steps their own clipped score
    assert float(matrix[0, 0]) == pytest.approx(clip([0.9], 0.5) - base)
    assert float(matrix[0, 4]) == pytest.approx(clip([0.3], 0.5))
    assert float(matrix[0, 7]) == pytest.approx(clip([0.6], 0.5))
    assert float(matrix[0, 9]) == 0.0  # after the last step: no process advantage


def test_nan_scores_and_missing_ends_earn_nothing():
    assert step_lengths([None, 4]) == [0, 5]
    rewards = pure_step_rewards([[math.nan, 0.5], [0.5]], [[0, 0], [10]], 0.1)
    assert rewards[0][0] == 0.0 and all(math.isfinite(x) for row in rewards for x in row)


def test_default_process_arm_keeps_its_result_key():
    assert PROCESS_ARMS[PROCESS].key() == {"outcome_weight": 0.5}
    assert PROCESS_ARMS[PROCESS_PURE].key() == {"outcome_weight": 0.5, "credit": "pure"}


def test_pure_process_arm_trains_through_run_grpo(tiny_lm, tiny_prm, tmp_path):
    from prm.rl.grpo import load_result, run_grpo, run_key
    from tests.prm.rl.conftest import TINY_RUN

    result = run_grpo(tiny_lm, tiny_prm, PROCESS_PURE, TINY_RUN, tmp_path)
    assert result.steps == 2 and all(p.n_steps is not None for p in result.curve)
    assert load_result(tmp_path, run_key(tiny_lm, tiny_prm, TINY_RUN, PROCESS_PURE)) == result
    assert load_result(tmp_path, run_key(tiny_lm, tiny_prm, TINY_RUN, PROCESS)) is None  # its credit is its key
