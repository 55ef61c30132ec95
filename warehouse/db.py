"""DuckDB over the warehouse: one view per table plus convenience views that join them."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TypeAlias

import duckdb

from warehouse.delta import open_table
from warehouse.location import normalize, table_uri
from warehouse.methods import method_names
from warehouse.model_views import VIEWS as MODEL_VIEWS
from warehouse.schemas import TABLES
from warehouse.version import check_version

# One (soft, hard) column pair per method of the method table, side by side in ``labeled_steps``.
_PIVOT = ",\n".join(
    f"  max(CASE WHEN l.method = '{m}' THEN l.soft_label END) AS {m}_soft,\n"
    f"  bool_or(l.hard_label) FILTER (WHERE l.method = '{m}') AS {m}_hard"
    for m in method_names()
)

# A step label_costs counts as labeled.
_LABELED = "hard_label IS NOT NULL AND status IN ('labeled', 'by_convention')"

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
    # What each labeling method cost and produced, per partition (source, day). Costs are the rollouts and tokens
    # the rows are charged (cached rollouts count: progress and OmegaPRM reuse MC's), so a row compares methods;
    # the money spent is the rollouts table. A labeled step has a hard label the method stands behind (labeled or by
    # convention; not unverifiable, and not a model's pseudo-label).
    "label_costs": f"""
SELECT method, source, day, count(*) AS n_labels, count(DISTINCT solution_id) AS n_solutions,
  count(*) FILTER (WHERE {_LABELED}) AS labeled_steps,
  avg(soft_label) AS mean_soft_label,
  avg(CASE WHEN hard_label THEN 1.0 ELSE 0.0 END) AS share_positive,
  CAST(sum(cost_rollouts) AS BIGINT) AS rollouts, CAST(sum(cost_tokens) AS BIGINT) AS tokens,
  sum(cost_rollouts) / nullif(count(*) FILTER (WHERE {_LABELED}), 0) AS rollouts_per_labeled_step,
  sum(cost_tokens) / nullif(count(*) FILTER (WHERE {_LABELED}), 0) AS tokens_per_labeled_step
FROM step_labels GROUP BY method, source, day ORDER BY method, source, day""",
    # Each model with every ancestor it was warm-started from (warehouse/model_views.py).
    **MODEL_VIEWS,
}


def connect(root: str | os.PathLike[str], database: str = ":memory:",
            versions: Mapping[str, int | None] | None = None) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection with a view per table, the convenience views and ``warehouse_versions``.

    The connection reads one snapshot: each table at its version when :func:`connect` ran, or at
    ``versions[table]`` when given (time travel; None = current). The ``warehouse_versions`` table names
    the versions read, so anything built from the connection can record them. Rows committed later are
    seen by a new connection. Tables never written are empty views of the right types. Delta tables are
    scanned as Arrow datasets (no DuckDB extension needed, local or ``s3://``); nothing is written to ``root``.
    """
    root = normalize(root)
    check_version(root)
    versions = dict(versions or {})
    unknown = sorted(set(versions) - set(TABLES))
    if unknown:
        raise KeyError(f"versions name unknown tables {unknown}; the warehouse has {sorted(TABLES)}")
    con = duckdb.connect(database)
    read: list[tuple[str, int | None]] = []
    for table, schema in TABLES.items():
        found = open_table(table_uri(root, table), versions.get(table))
        if found is not None:
            columns = ", ".join(f'"{name}"' for name in schema.names)
            # An Arrow dataset: DuckDB scans it with projection and filter pushdown.
            con.from_arrow(found.to_pyarrow_dataset()).select(columns).create_view(table, replace=True)
        else:
            if versions.get(table) is not None:
                raise KeyError(f"table {table} has no version {versions[table]}: it was never written")
            empty = schema.empty_table()  # noqa: F841 - referenced by name in the SQL below
            con.execute(f"CREATE OR REPLACE TABLE {table} AS SELECT * FROM empty")
        read.append((table, None if found is None else found.version()))
    con.execute("CREATE OR REPLACE TABLE warehouse_versions (table_name VARCHAR, version BIGINT)")
    con.executemany("INSERT INTO warehouse_versions VALUES (?, ?)", read)
    for name, sql in CONVENIENCE_VIEWS.items():
        con.execute(f"CREATE OR REPLACE VIEW {name} AS {sql}")
    return con


# A warehouse snapshot: a warehouse root (read as of now) or an open :func:`connect` connection (one snapshot
# already pinned, so several readers see the same versions). A string, not a runtime union: a module-level object
# holding DuckDB's (nanobind) connection type outlives DuckDB at interpreter exit, and nanobind then reports it as a
# leak.
Snapshot: TypeAlias = "str | os.PathLike[str] | duckdb.DuckDBPyConnection"


def snapshot_connection(snapshot: Snapshot) -> duckdb.DuckDBPyConnection:
    """The connection that reads ``snapshot``: the connection itself, or :func:`connect` on the root."""
    return snapshot if isinstance(snapshot, duckdb.DuckDBPyConnection) else connect(snapshot)


def snapshot_versions(con: duckdb.DuckDBPyConnection) -> dict[str, int | None]:
    """The table versions a :func:`connect` connection reads (None: the table was never written)."""
    return dict(con.execute("SELECT table_name, version FROM warehouse_versions ORDER BY 1").fetchall())


def source_clause(source: str | Sequence[str] | None, column: str = "p.source") -> tuple[str, dict[str, str]]:
    """An ``AND <column> IN (...)`` filter with named parameters for one source or several; none for every source.

    >>> source_clause(("flywheel-r0", "flywheel-r1"))
    ('AND p.source IN ($source_0, $source_1)', {'source_0': 'flywheel-r0', 'source_1': 'flywheel-r1'})
    >>> source_clause(None)
    ('', {})
    """
    names = [source] if isinstance(source, str) else list(source or ())
    params = {f"source_{i}": name for i, name in enumerate(names)}
    if not params:
        return "", {}
    return f"AND {column} IN ({', '.join('$' + key for key in params)})", params


def view_names() -> list[str]:
    """Every table and convenience view the connection exposes."""
    return sorted([*TABLES, *CONVENIENCE_VIEWS, "warehouse_versions"])
