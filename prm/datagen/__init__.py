"""Turn engine completions into warehouse rows: sampled solutions with their steps, and step rollouts."""

from prm.datagen.hub_datasets import hub_file
from prm.datagen.intake import (
    IMPORTED_MARK,
    IMPORTED_TASKS,
    Intake,
    IntakeCounts,
    intake_rows,
    read_intake,
    step_truth_from_first_error,
    with_gold,
)
from prm.datagen.problems import store_new_problems
from prm.datagen.rollouts import RolloutTarget, mc_by_step, prefix_target, rollout_rows
from prm.datagen.solutions import SampleStats, accuracy_by_gold_steps, sample_solution_rows, sampling_key, solution_rows
from prm.datagen.stored_solutions import first_errors_truth, replace_solutions, solutions_to_label
from prm.datagen.synthetic import is_synthetic, policy_written_sql, synthetic_solution_rows
from prm.datagen.targets import SolutionToLabel
from prm.datagen.truth import arithmetic_problem

__all__ = [
    "IMPORTED_MARK",
    "IMPORTED_TASKS",
    "Intake",
    "IntakeCounts",
    "RolloutTarget",
    "SampleStats",
    "SolutionToLabel",
    "accuracy_by_gold_steps",
    "arithmetic_problem",
    "first_errors_truth",
    "hub_file",
    "intake_rows",
    "is_synthetic",
    "mc_by_step",
    "policy_written_sql",
    "prefix_target",
    "read_intake",
    "replace_solutions",
    "rollout_rows",
    "sample_solution_rows",
    "sampling_key",
    "solution_rows",
    "solutions_to_label",
    "step_truth_from_first_error",
    "store_new_problems",
    "synthetic_solution_rows",
    "with_gold",
]
