"""The problems partition: append the problems no other partition stored yet."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from prm.tasks import ProblemRecord
from warehouse import Warehouse, connect


def existing_problem_ids(wh: Warehouse, day: str, source: str) -> set[str]:
    """Problem ids stored by other partitions than (day, source)."""
    if not wh.files("problems"):
        return set()
    rows = connect(wh.root).execute(
        "SELECT problem_id FROM problems WHERE NOT (day = ? AND source = ?)", [day, source]).fetchall()
    return {r[0] for r in rows}


def store_new_problems(wh: Warehouse, records: Sequence[ProblemRecord], *, source: str, day: str,
                       run_id: str) -> tuple[list[ProblemRecord], Any]:
    """Replace the partition's problems with ``records`` minus those other partitions hold; (fresh records, write
    result). Parallel partitions may draw the same question, so reading the ids and writing is one locked step."""
    with wh.table_lock("problems"):
        seen = existing_problem_ids(wh, day, source)
        fresh = [r for r in records if r.problem_id not in seen]
        result = wh.write("problems", [r.to_row() for r in fresh], source=source, day=day, run_id=run_id,
                          writer="problems", replace=True)
    return fresh, result
