"""Problem sources: the seeded arithmetic generator, GSM8K/MATH loaders, step segmentation."""

from prm.tasks.arithmetic import ArithmeticConfig, ArithmeticProblem, first_error_index, generate_problems, step_truth
from prm.tasks.datasets import load_problems
from prm.tasks.records import ProblemRecord, stable_id
from prm.tasks.segment import split_steps
from prm.tasks.sources import ArithmeticSourceConfig, generate_arithmetic

__all__ = [
    "ArithmeticConfig",
    "ArithmeticProblem",
    "ArithmeticSourceConfig",
    "ProblemRecord",
    "first_error_index",
    "generate_arithmetic",
    "generate_problems",
    "load_problems",
    "split_steps",
    "stable_id",
    "step_truth",
]
