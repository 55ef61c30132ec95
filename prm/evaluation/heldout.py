"""Held-out solutions from the warehouse: what every PRM (and baseline) is scored on, the same for all."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import duckdb

from prm.datagen.synthetic import policy_written_sql
from warehouse import connect
from warehouse.db import source_clause

# Ok solutions with exact truth (generated tasks) and their ordered steps; model-written rows only.
_SOLUTIONS_SQL = f"""
SELECT so.solution_id, so.problem_id, p.question, p.n_gold_steps, so.final_answer, so.is_correct,
       so.first_error_truth AS first_error, so.sample_idx
FROM solutions so JOIN problems p USING (problem_id)
WHERE so.status = 'ok' AND so.first_error_truth IS NOT NULL AND so.n_steps > 0
  AND {policy_written_sql('so.model')} {{source_filter}}
ORDER BY so.problem_id, so.sample_idx, so.solution_id
"""


def heldout_solutions(con_or_root: duckdb.DuckDBPyConnection | str | Path, split_of: Any,
                      splits: tuple[str, ...] = ("val", "test"),
                      source: str | tuple[str, ...] | None = None) -> dict[str, list[dict]]:
    """Per split, every gradable solution with exact truth: ``solution_id, problem_id, question, steps,
    first_error, final_answer, is_correct``. ``split_of(problem_id, n_gold_steps)`` names a problem's split
    (e.g. ``prm.training.problem_split`` bound to a config), so every label method is scored on the same
    problems. ``source``: one warehouse source, several, or None for every source."""
    con = con_or_root if isinstance(con_or_root, duckdb.DuckDBPyConnection) else connect(con_or_root)
    source_filter, params = source_clause(source)
    cursor = con.execute(_SOLUTIONS_SQL.format(source_filter=source_filter), params)
    names = [d[0] for d in cursor.description]
    rows = [dict(zip(names, values, strict=True)) for values in cursor.fetchall()]
    steps: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for sid, idx, text in con.execute("SELECT solution_id, step_idx, text FROM steps").fetchall():
        steps[sid].append((idx, text))
    out: dict[str, list[dict]] = {s: [] for s in splits}
    for row in rows:
        split = split_of(row["problem_id"], row["n_gold_steps"])
        if split in out:
            row["steps"] = [text for _, text in sorted(steps[row["solution_id"]])]
            out[split].append(row)
    return out
