"""ProcessBench rows: ``{"id", "problem", "steps", "label"}``, label = the first wrong step's index or -1.

The layout of ``Qwen/ProcessBench`` (Zheng et al. 2024); the first-error rule is ``prm.format.first_error_of``,
the one the labelers and the metrics use. Labels after the first wrong step are not stored: ProcessBench
holds one index per solution, and by the convention every later step is wrong anyway.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from prm.export.io import read_jsonl, write_jsonl
from prm.export.rows import require_hard
from prm.format import first_error_of

KEYS = ("id", "problem", "steps", "label")


def to_processbench(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """TRL stepwise rows (hard labels) -> ProcessBench rows; ``id`` is the solution_id, else the row index.

    >>> to_processbench([{"prompt": "q", "completions": ["a", "b", "c"], "labels": [True, False, True]}])
    [{'id': '0', 'problem': 'q', 'steps': ['a', 'b', 'c'], 'label': 1}]
    """
    require_hard(rows, "ProcessBench")
    return [{"id": row.get("solution_id", str(i)), "problem": row["prompt"], "steps": list(row["completions"]),
             "label": first_error_of(row["labels"])} for i, row in enumerate(rows)]


def write_processbench(rows: Sequence[Mapping[str, Any]], path: str | Path) -> Path:
    """Write TRL stepwise rows (hard labels) as ProcessBench JSONL, atomically."""
    return write_jsonl(to_processbench(rows), path)


def read_processbench(path: str | Path) -> list[dict[str, Any]]:
    """ProcessBench rows from JSONL, checked: every key present, ``-1 <= label < len(steps)``."""
    rows = read_jsonl(path)
    for n, row in enumerate(rows):
        missing = [k for k in KEYS if k not in row]
        if missing:
            raise ValueError(f"{path} row {n}: missing {missing}; ProcessBench rows have keys {list(KEYS)}")
        label, steps = row["label"], row["steps"]
        if isinstance(label, bool) or not isinstance(label, int) or not -1 <= label < len(steps):
            raise ValueError(f"{path} row {n}: label {label!r} is not -1 or a step index below {len(steps)}")
    return rows
