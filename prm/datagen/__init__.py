"""Turn engine completions into warehouse rows: sampled solutions with their steps, and step rollouts."""

from prm.datagen.rollouts import RolloutTarget, rollout_rows, rollout_targets
from prm.datagen.solutions import SampleStats, sample_solution_rows, solution_rows

__all__ = [
    "RolloutTarget",
    "SampleStats",
    "rollout_rows",
    "rollout_targets",
    "sample_solution_rows",
    "solution_rows",
]
