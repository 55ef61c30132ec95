"""Problem sources: the seeded arithmetic and logic generators and the GSM8K/MATH loaders; solution files users
already have (ProcessBench, TRL, Math-Shepherd, plain) read into records."""

from prm.tasks.arithmetic import (
    MAX_OPS,
    OPERATORS,
    STYLES,
    ArithmeticConfig,
    ArithmeticProblem,
    first_error_index,
    generate_problems,
    step_truth,
)
from prm.tasks.dataset_rows import file_rows
from prm.tasks.datasets import FILE_SUFFIXES, load_problems
from prm.tasks.logic import LogicProblem, corrupt_steps
from prm.tasks.records import ProblemRecord, stable_id
from prm.tasks.solution_files import (
    SOLUTION_FORMATS,
    LoadedSolutions,
    SolutionRecord,
    attach_reference,
    detect_format,
    load_solutions,
)
from prm.tasks.sources import (
    BUILTIN_SOURCES,
    ArithmeticSourceConfig,
    generate_arithmetic,
    inbox_file,
    is_source_name,
    load_source,
    scan_inbox,
)

__all__ = [
    "BUILTIN_SOURCES",
    "FILE_SUFFIXES",
    "MAX_OPS",
    "OPERATORS",
    "SOLUTION_FORMATS",
    "STYLES",
    "ArithmeticConfig",
    "ArithmeticProblem",
    "ArithmeticSourceConfig",
    "LoadedSolutions",
    "LogicProblem",
    "ProblemRecord",
    "SolutionRecord",
    "attach_reference",
    "corrupt_steps",
    "detect_format",
    "file_rows",
    "first_error_index",
    "generate_arithmetic",
    "generate_problems",
    "inbox_file",
    "is_source_name",
    "load_problems",
    "load_solutions",
    "load_source",
    "scan_inbox",
    "stable_id",
    "step_truth",
]
