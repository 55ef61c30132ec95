"""ProcessBench rows: ``{"id", "problem", "steps", "label"}``, label = the first wrong step's index or -1.

The layout of ``Qwen/ProcessBench`` (Zheng et al. 2024); the first-error rule is ``prm.format.first_error_of``,
the one the labelers and the metrics use. Labels after the first wrong step are not stored: ProcessBench
holds one index per solution, and by the convention every later step is wrong anyway.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from prm.export.rows import require_hard
from prm.files import json_kind, read_jsonl_lines, write_jsonl
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
    """ProcessBench rows from JSONL (this module's export, or a file in the layout of ``Qwen/ProcessBench`` such as
    its ``gsm8k.jsonl``): an external step-labelled test set. Every row is checked; an error names the file, the
    line and the field, and says what to fix. Extra keys (``generator``, ``final_answer_correct``) are kept.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "pb.jsonl"
    >>> _ = path.write_text('{"id": "a", "problem": "1+1?", "steps": ["1+1 = 3"], "label": 0}\\n')
    >>> read_processbench(path)
    [{'id': 'a', 'problem': '1+1?', 'steps': ['1+1 = 3'], 'label': 0}]
    """
    lines = read_jsonl_lines(path)
    if not lines:
        raise ValueError(f"{path} holds no rows; a ProcessBench file has one JSON object per line with keys "
                         f"{list(KEYS)}")
    seen: dict[str, int] = {}
    for n, row in lines:
        where = f"{path}:{n}"
        missing = [k for k in KEYS if k not in row]
        if missing:
            raise ValueError(f"{where}: missing {missing}; ProcessBench rows have keys {list(KEYS)} (label: the first "
                             "wrong step's 0-based index, -1 when every step is right)")
        problem, steps, label, rid = row["problem"], row["steps"], row["label"], row["id"]
        if not isinstance(problem, str) or not problem.strip():
            raise ValueError(f"{where}: problem is {problem!r}; give the question as a non-empty string")
        if not isinstance(steps, list) or not steps or not all(isinstance(t, str) for t in steps):
            raise ValueError(f"{where}: steps must be a non-empty list of step strings, got {_kind(steps)}; split "
                             "the solution into steps (prm.format.split_steps) before writing the file")
        if isinstance(label, bool) or not isinstance(label, int) or not -1 <= label < len(steps):
            raise ValueError(f"{where}: label {label!r} is not -1 or a step index below {len(steps)}; label is the "
                             "first wrong step's 0-based index, -1 when every step is right")
        if isinstance(rid, bool) or not isinstance(rid, str | int):
            raise ValueError(f"{where}: id {rid!r} is not a string or an integer; give every row a unique id")
        if str(rid) in seen:
            raise ValueError(f"{where}: id {rid!r} repeats line {seen[str(rid)]}; give every row a unique id")
        seen[str(rid)] = n
    return [row for _, row in lines]


def _kind(value: Any) -> str:
    """A short description of a bad ``steps`` value for an error message."""
    if isinstance(value, list):
        bad = next((t for t in value if not isinstance(t, str)), None)
        return "an empty list" if not value else f"a list holding {json_kind(bad)}"
    return json_kind(value)
