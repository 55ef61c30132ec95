"""DuckDB over the warehouse: one view per table plus convenience views that join them."""

from __future__ import annotations

from pathlib import Path

import duckdb

from warehouse.methods import method_names
from warehouse.schemas import TABLES
from warehouse.version import check_version

# One (soft, hard) column pair per method of the method table, side by side in ``labeled_steps``.
_PIVOT = ",\n".join(
    f"  max(CASE WHEN l.method = '{m}' THEN l.soft_label END) AS {m}_soft,\n"
    f"  bool_or(l.hard_label) FILTER (WHERE l.method = '{m}') AS {m}_hard"
    for m in method_names()
)

CONVENIENCE_VIEWS: dict[str, str] = {
    # Every step with its problem, solution and each method's label in one row.
    "labeled_steps": f"""
SELECT s.problem_id, s.solution_id, s.step_idx, p.task, p.source, p.question, p.gold_answer,
  s.text AS step_text, s.char_start, s.char_end, so.final_answer, so.is_correct AS solution_correct, so.model,
  s.is_correct_truth,
{_PIVOT}
FROM steps s
JOIN solutions so USING (solution_id)
JOIN problems p ON p.problem_id = s.problem_id
LEFT JOIN step_labels l ON l.solution_id = s.solution_id AND l.step_idx = s.step_idx
GROUP BY ALL
ORDER BY s.problem_id, s.solution_id, s.step_idx""",
    # Accuracy of each policy per task and source.
    "solution_accuracy": """
SELECT p.source, p.task, so.model, count(*) AS n_solutions,
  avg(CASE WHEN so.is_correct THEN 1.0 ELSE 0.0 END) AS accuracy,
  avg(so.n_steps) AS mean_steps, sum(so.completion_tokens) AS completion_tokens
FROM solutions so JOIN problems p USING (problem_id)
GROUP BY ALL ORDER BY ALL""",
    # What each labeling method cost and produced.
    "label_costs": """
SELECT method, count(*) AS n_labels, count(DISTINCT solution_id) AS n_solutions,
  avg(soft_label) AS mean_soft_label,
  avg(CASE WHEN hard_label THEN 1.0 ELSE 0.0 END) AS share_positive,
  sum(cost_rollouts) AS rollouts, sum(cost_tokens) AS tokens
FROM step_labels GROUP BY method ORDER BY method""",
}


def table_glob(root: Path, table: str) -> str:
    return str(root / table / "source=*" / "day=*" / "*.parquet")


def _has_files(root: Path, table: str) -> bool:
    return any(p for p in (root / table).glob("source=*/day=*/*.parquet") if not p.name.startswith("."))


def connect(root: str | Path, database: str = ":memory:") -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with a view per table and the convenience views.

    Views read the Parquet files at query time, so rows written later are visible. Tables
    with no files yet are empty views of the right types. Nothing is written to ``root``.
    """
    root = Path(root)
    check_version(root)
    con = duckdb.connect(database)
    for table, schema in TABLES.items():
        if _has_files(root, table):
            glob = table_glob(root, table).replace("'", "''")
            con.execute(
                f"CREATE OR REPLACE VIEW {table} AS SELECT * FROM read_parquet('{glob}', "
                "hive_partitioning = true, union_by_name = true, "
                "hive_types = {'source': VARCHAR, 'day': VARCHAR})"
            )
        else:
            empty = schema.empty_table()  # noqa: F841 - referenced by name in the SQL below
            con.execute(f"CREATE OR REPLACE TABLE {table} AS SELECT * FROM empty")
    for name, sql in CONVENIENCE_VIEWS.items():
        con.execute(f"CREATE OR REPLACE VIEW {name} AS {sql}")
    return con


def view_names() -> list[str]:
    """Every table and convenience view the connection exposes."""
    return sorted([*TABLES, *CONVENIENCE_VIEWS])
