"""Metadata helpers: markdown tables people read in the Dagster UI."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import dagster as dg

from prm.format import markdown_table

MAX_CELL = 80  # characters of a preview cell; longer text is cut with an ellipsis


def _cell(value: Any) -> str:
    text = "" if value is None else str(value)
    text = text.replace("\n", " ⏎ ").replace("|", "\\|")
    return text if len(text) <= MAX_CELL else text[: MAX_CELL - 1] + "…"


def md_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None) -> dg.MetadataValue:
    """A markdown table of ``rows`` (a preview, a histogram, an audit), cells cut to :data:`MAX_CELL`."""
    if not rows:
        return dg.MetadataValue.md("_no rows_")
    return dg.MetadataValue.md(markdown_table(rows, columns or list(rows[0].keys()), render=_cell))


def histogram(values: Iterable[Any], label: str) -> dg.MetadataValue:
    """Counts per value, with a bar, as a markdown table."""
    counts = sorted(Counter(values).items(), key=lambda kv: (str(type(kv[0])), kv[0]))
    total = sum(n for _, n in counts) or 1
    rows = [{label: k, "count": n, "share": f"{n / total:.0%}", "": "█" * max(1, round(20 * n / total))}
            for k, n in counts]
    return md_table(rows)
