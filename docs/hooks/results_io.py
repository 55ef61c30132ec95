"""Reading the committed benchmark logs and formatting their numbers for the generated results pages.

A log in ``benchmarks/results/`` is either one JSON document (possibly pretty-printed) or a stream of lines of
which some are JSON objects (progress objects first, the benchmark's summary object last). Nothing here knows a
number: every figure on a results page is read from a log when the site is built.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MISSING = "-"  # what a table cell shows for a value the log does not hold


def json_objects(path: Path) -> list[dict[str, Any]]:
    """Every JSON object in a log, in order: the whole file when it is one document, else each line that is one.

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "x.log"
    >>> _ = p.write_text('progress\\n{"a": 1}\\n{"b": 2}\\nreal 1m\\n')
    >>> json_objects(p)
    [{'a': 1}, {'b': 2}]
    """
    text = path.read_text(encoding="utf-8")
    try:
        whole = json.loads(text)
    except json.JSONDecodeError:
        whole = None
    if isinstance(whole, dict):
        return [whole]
    found = []
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            found.append(obj)
    return found


def last_with(objects: Sequence[dict[str, Any]], key: str) -> dict[str, Any]:
    """The last object holding ``key``; a KeyError naming the key when none does."""
    for obj in reversed(objects):
        if key in obj:
            return obj
    raise KeyError(f"no JSON object in the log has the key {key!r}")


@dataclass(frozen=True)
class Provenance:
    """Where a log came from: its path, the commit that last changed it and that commit's date."""

    path: str
    commit: str
    date: str


def provenance(repo: Path, rel_path: str) -> Provenance:
    """The last commit that touched ``rel_path`` in ``repo`` (``uncommitted`` outside a git checkout)."""
    try:
        out = subprocess.run(["git", "log", "-1", "--format=%h %cs", "--", rel_path], cwd=repo, capture_output=True,
                             text=True, timeout=30, check=False).stdout.split()
    except (OSError, subprocess.SubprocessError):
        out = []
    if len(out) == 2:
        return Provenance(rel_path, out[0], out[1])
    return Provenance(rel_path, "uncommitted", "-")


def num(value: Any, digits: int = 3, signed: bool = False) -> str:
    """A number as a table shows it; None (or a non-number) as ``-``.

    >>> num(0.95123), num(0.05, signed=True), num(None), num(1234.5, 0)
    ('0.951', '+0.050', '-', '1,234')
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        return MISSING
    if digits == 0:
        return f"{value:+,.0f}" if signed else f"{value:,.0f}"
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def interval(ci: Any, digits: int = 2) -> str:
    """A 95% interval ``[lo, hi]``, or nothing when the log has none.

    >>> interval([0.912, 0.961]), interval(None)
    ('[0.91, 0.96]', '')
    """
    if not isinstance(ci, list | tuple) or len(ci) != 2 or not all(isinstance(v, int | float) for v in ci):
        return ""
    return f"[{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]"


def with_ci(value: Any, ci: Any, digits: int = 3, signed: bool = False) -> str:
    """``0.951 [0.94, 0.96]``.

    >>> with_ci(0.9512, [0.94, 0.963])
    '0.951 [0.94, 0.96]'
    """
    text = num(value, digits, signed)
    bounds = interval(ci)
    return f"{text} {bounds}" if bounds and text != MISSING else text


def table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A Markdown table.

    >>> print(table(["a", "b"], [[1, "x"]]))
    | a | b |
    |---|---|
    | 1 | x |
    """
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)
