"""Metadata helpers: markdown tables people read in the Dagster UI."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import dagster as dg

from prm.format import markdown_table

MAX_CELL = 80  # characters of a preview cell; longer text is cut with an ellipsis


class _Whole(str):
    """A cell value never cut (a file path: its end names the file)."""


def _cell(value: Any) -> str:
    text = "" if value is None else str(value)
    text = text.replace("\n", " ⏎ ").replace("|", "\\|")
    return text if len(text) <= MAX_CELL or isinstance(value, _Whole) else text[: MAX_CELL - 1] + "…"


def md_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None, *,
             whole: Sequence[str] = ()) -> dg.MetadataValue:
    """A markdown table of ``rows`` (a preview, a histogram, an audit), cells cut to :data:`MAX_CELL` except those
    of the ``whole`` columns (file paths, whose end is what a reader needs).

    >>> md_table([{"file": "/a/" + "x" * 90 + "/in.jsonl", "text": "y" * 90}], whole=["file"]).value.count("…")
    1
    """
    if not rows:
        return dg.MetadataValue.md("_no rows_")
    rows = [{k: _Whole(v) if k in whole and v is not None else v for k, v in row.items()} for row in rows]
    return dg.MetadataValue.md(markdown_table(rows, columns or list(rows[0].keys()), render=_cell))


def histogram(values: Iterable[Any], label: str) -> dg.MetadataValue:
    """Counts per value, with a bar, as a markdown table."""
    counts = sorted(Counter(values).items(), key=lambda kv: (str(type(kv[0])), kv[0]))
    total = sum(n for _, n in counts) or 1
    rows = [{label: k, "count": n, "share": f"{n / total:.0%}", "": "█" * max(1, round(20 * n / total))}
            for k, n in counts]
    return md_table(rows)
