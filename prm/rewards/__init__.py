"""RL rewards from a PRM: per-step scores with character spans, shaping (min-form, PURE's soft min, Clip,
Delta, sum, mean, last) mixed with the verifiable outcome, a PROF-style consistency filter, and adapters for
TRL (:mod:`prm.rewards.adapters.trl`), verl (:mod:`prm.rewards.adapters.verl`) and OpenRLHF
(:mod:`prm.rewards.adapters.openrlhf`). Never imports dagster; an adapter imports its framework only when used.
"""

from prm.rewards.config import SHAPING_NAMES, RewardConfig
from prm.rewards.constants import DEFAULT_ETA, DEFAULT_OUTCOME_WEIGHT, DEFAULT_TEMPERATURE
from prm.rewards.outcome import outcome_rewards
from prm.rewards.rewarder import UNCONDITIONED, Rewarder, ScoredCompletion, cached_scorer, load_rewarder
from prm.rewards.shaping import SHAPINGS, ShapedReward, clip, delta, reward_for
from prm.rewards.steps import StepRewards, step_rewards, step_rewards_batch
from prm.rewards.token_spans import step_end_tokens, token_char_ends

__all__ = [
    "DEFAULT_ETA",
    "DEFAULT_OUTCOME_WEIGHT",
    "DEFAULT_TEMPERATURE",
    "SHAPINGS",
    "SHAPING_NAMES",
    "UNCONDITIONED",
    "RewardConfig",
    "Rewarder",
    "ScoredCompletion",
    "ShapedReward",
    "StepRewards",
    "cached_scorer",
    "clip",
    "delta",
    "load_rewarder",
    "outcome_rewards",
    "reward_for",
    "step_end_tokens",
    "step_rewards",
    "step_rewards_batch",
    "token_char_ends",
]
