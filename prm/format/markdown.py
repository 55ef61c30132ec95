"""Markdown tables: the one renderer behind every table people read (Dagster metadata, logs, the README)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any


def cell(value: Any, digits: int = 3) -> str:
    """A number to ``digits`` decimals, ``-`` for None, anything else as text with ``|`` and newlines escaped.

    >>> cell(0.5), cell(None), cell(3), cell("a|b")
    ('0.500', '-', '3', 'a\\\\|b')
    """
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value).replace("\n", " ⏎ ").replace("|", "\\|")


def markdown_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None, *,
                   headers: Sequence[str] | None = None, render: Callable[[Any], str] = cell) -> str:
    """``rows`` as a markdown table: ``columns`` (default: the first row's keys) under ``headers`` (default: the
    column names), each value through ``render``. A row may instead be one pre-rendered line (a ``str``).

    >>> print(markdown_table([{"method": "mc", "f1": 0.5}, {"method": "truth", "f1": None}]))
    | method | f1 |
    |---|---|
    | mc | 0.500 |
    | truth | - |
    """
    columns = list(columns if columns is not None else (rows[0].keys() if rows else ()))
    lines = ["| " + " | ".join(headers if headers is not None else columns) + " |", "|" + "---|" * len(columns)]
    lines += [row if isinstance(row, str) else "| " + " | ".join(render(row.get(c)) for c in columns) + " |"
              for row in rows]
    return "\n".join(lines)
