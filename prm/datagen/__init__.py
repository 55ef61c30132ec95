"""Turn engine completions into warehouse rows: sampled solutions with their steps, and step rollouts."""

from prm.datagen.rollouts import RolloutTarget, prefix_target, rollout_rows
from prm.datagen.solutions import SampleStats, sample_solution_rows, solution_rows

__all__ = [
    "RolloutTarget",
    "SampleStats",
    "prefix_target",
    "rollout_rows",
    "sample_solution_rows",
    "solution_rows",
]
