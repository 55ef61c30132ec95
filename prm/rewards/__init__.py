"""RL rewards from a PRM: per-step scores with character spans, shaping (min-form, PURE's soft min, Clip,
Delta, sum, mean, last) mixed with the verifiable outcome, a PROF-style consistency filter, and adapters for
TRL (:mod:`prm.rewards.adapters.trl`), verl (:mod:`prm.rewards.adapters.verl`) and OpenRLHF
(:mod:`prm.rewards.adapters.openrlhf`). Never imports dagster; an adapter imports its framework only when used.
"""

from prm.rewards.config import RewardConfig
from prm.rewards.rewarder import Rewarder, ScoredCompletion, cached_scorer, load_rewarder
from prm.rewards.shaping import SHAPINGS, ShapedReward, reward_for
from prm.rewards.steps import StepRewards, step_rewards, step_rewards_batch

__all__ = [
    "SHAPINGS",
    "RewardConfig",
    "Rewarder",
    "ScoredCompletion",
    "ShapedReward",
    "StepRewards",
    "cached_scorer",
    "load_rewarder",
    "reward_for",
    "step_rewards",
    "step_rewards_batch",
]
