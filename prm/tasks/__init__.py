"""Problem sources: the seeded arithmetic and logic generators and the GSM8K/MATH loaders."""

from prm.tasks.arithmetic import ArithmeticConfig, ArithmeticProblem, first_error_index, generate_problems, step_truth
from prm.tasks.datasets import load_problems
from prm.tasks.records import ProblemRecord, stable_id
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
    "stable_id",
    "step_truth",
]
