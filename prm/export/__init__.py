"""Exports of labeled steps other tools read: TRL stepwise supervision (JSONL or a ``datasets`` folder),
Math-Shepherd text, ProcessBench rows; all from TRL stepwise rows, all written atomically, each with a reader.
"""

from prm.export.hub import HubUnavailableError, push_to_hub
from prm.export.math_shepherd import math_shepherd_text, read_math_shepherd, write_math_shepherd
from prm.export.processbench import read_processbench, write_processbench
from prm.export.rows import check_stepwise_rows
from prm.export.trl import read_trl_stepwise, save_dataset, write_trl_stepwise
from prm.format import escape_tag

__all__ = [
    "HubUnavailableError",
    "check_stepwise_rows",
    "escape_tag",
    "math_shepherd_text",
    "push_to_hub",
    "read_math_shepherd",
    "read_processbench",
    "read_trl_stepwise",
    "save_dataset",
    "write_math_shepherd",
    "write_processbench",
    "write_trl_stepwise",
]
