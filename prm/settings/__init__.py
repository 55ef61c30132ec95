"""Checks for numeric settings: one validator per kind of number (finite, in range, a count, a seed), used by every
config that reads one, so a NaN, an infinity or an absurd size is refused where it is read, with the bound and why.

The bottom layer of ``prm`` beside ``prm.files``: it imports no other package of the project.
"""

from prm.settings.bounds import MAX_SEED, check_count, check_finite, check_range, check_seed
from prm.settings.sampling import (
    check_kv_cache_gib,
    check_problems,
    check_rollout_budget,
    check_rollouts,
    check_samples,
    check_temperature,
    check_top_p,
)
from prm.settings.training import (
    check_batch,
    check_learning_rate,
    check_lora,
    check_steps,
    check_threads,
    check_tokens,
    check_weight_decay,
)

__all__ = [
    "MAX_SEED",
    "check_batch",
    "check_count",
    "check_finite",
    "check_kv_cache_gib",
    "check_learning_rate",
    "check_lora",
    "check_problems",
    "check_range",
    "check_rollout_budget",
    "check_rollouts",
    "check_samples",
    "check_seed",
    "check_steps",
    "check_temperature",
    "check_threads",
    "check_tokens",
    "check_top_p",
    "check_weight_decay",
]
