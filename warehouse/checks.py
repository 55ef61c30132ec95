"""Data-quality checks over the warehouse, shared by Dagster asset checks and tests.

Each check returns a :class:`CheckOutcome` with counts, never raises on bad data.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from warehouse.db import connect
from warehouse.delta import open_table
from warehouse.schemas import PRIMARY_KEYS, delta_schema
from warehouse.store import Warehouse


@dataclass(frozen=True)
class CheckOutcome:
    """Whether a check passed, a one-line description, and counts for metadata."""

    passed: bool
    description: str
    counts: dict[str, Any] = field(default_factory=dict)


def schema_conforms(wh: Warehouse, table: str) -> CheckOutcome:
    """``table``'s Delta schema is exactly the table's schema (names and types).

    The warehouse's writer always commits that schema and Delta refuses appends that differ, but a foreign
    writer (Spark, Polars, delta-rs with ``schema_mode="merge"``) can evolve the table; this catches it.
    """
    expected = delta_schema(table)
    found = open_table(wh.uri(table))
    if found is None:
        return CheckOutcome(True, f"{table} has no rows yet", {"files": 0, "bad_columns": 0})
    got = pa.schema(found.schema().to_arrow())
    want = {f.name: str(f.type) for f in expected}
    have = {f.name: str(f.type) for f in got}
    bad = sorted(f"{name}: {have.get(name, 'missing')} (expected {want.get(name, 'no such column')})"
                 for name in set(want) | set(have) if want.get(name) != have.get(name))
    files = len(found.file_uris())
    desc = f"{table} version {found.version()} ({files} files) matches schema" if not bad else \
        f"{table} version {found.version()}: {len(bad)} columns differ: {bad[:3]}"
    return CheckOutcome(not bad, desc, {"files": files, "bad_columns": len(bad), "version": found.version()})


def ids_unique(wh: Warehouse, table: str) -> CheckOutcome:
    """No two rows of ``table`` share a primary key."""
    key = ", ".join(PRIMARY_KEYS[table])
    con = connect(wh.root)
    (rows,) = con.execute(f"SELECT count(*) FROM {table}").fetchall()[0]
    (dupes,) = con.execute(
        f"SELECT count(*) FROM (SELECT {key} FROM {table} GROUP BY {key} HAVING count(*) > 1)"
    ).fetchall()[0]
    desc = f"{rows} rows, every ({key}) unique" if not dupes else f"{dupes} ({key}) values repeat"
    return CheckOutcome(dupes == 0, desc, {"rows": rows, "duplicate_keys": dupes})


def no_orphans(wh: Warehouse, child: str, parent: str, key: str, where: str | None = None) -> CheckOutcome:
    """Every ``child.key`` (of the rows matching ``where``, a SQL filter on ``child``) exists in ``parent``
    (e.g. no steps without their solution)."""
    con = connect(wh.root)
    (orphans,) = con.execute(
        f"SELECT count(*) FROM {child} c WHERE NOT EXISTS (SELECT 1 FROM {parent} p WHERE p.{key} = c.{key})"
        + (f" AND ({where})" if where else "")
    ).fetchall()[0]
    desc = f"every {child}.{key} is in {parent}" if not orphans else f"{orphans} {child} rows have no {parent} row"
    return CheckOutcome(orphans == 0, desc, {"orphans": orphans})


def values_in_range(wh: Warehouse, table: str, column: str, low: float, high: float) -> CheckOutcome:
    """Every non-null ``column`` lies in [low, high]."""
    con = connect(wh.root)
    (bad,) = con.execute(
        f"SELECT count(*) FROM {table} WHERE {column} IS NOT NULL AND ({column} < ? OR {column} > ?)", [low, high]
    ).fetchall()[0]
    desc = f"{table}.{column} within [{low}, {high}]" if not bad else f"{bad} {table}.{column} values outside"
    return CheckOutcome(bad == 0, desc, {"out_of_range": bad})


def share_within(
    wh: Warehouse, table: str, condition: str, low: float, high: float, where: str = "TRUE", min_rows: int = 1
) -> CheckOutcome:
    """The share of rows (matching ``where``) for which ``condition`` holds lies in [low, high].

    Used for class balance: e.g. the share of correct solutions or of positive step labels. With
    fewer than ``min_rows`` rows the check passes and says so (too little data to judge balance).
    """
    con = connect(wh.root)
    n, share = con.execute(
        f"SELECT count(*), avg(CASE WHEN {condition} THEN 1.0 ELSE 0.0 END) FROM {table} WHERE {where}"
    ).fetchall()[0]
    if n < min_rows:
        return CheckOutcome(True, f"only {n} rows: too few to judge balance", {"rows": n})
    ok = low <= share <= high
    desc = f"share where {condition} = {share:.3f}, bounds [{low}, {high}]"
    return CheckOutcome(ok, desc, {"rows": n, "share": round(float(share), 4)})


def gold_answers_consistent(wh: Warehouse) -> CheckOutcome:
    """Every problem has a gold answer, and a generated (``arith_*``) problem's gold solution ends in it."""
    con = connect(wh.root)
    (bad,) = con.execute(
        "SELECT count(*) FROM problems WHERE trim(gold_answer) = '' OR (task LIKE 'arith_%' AND "
        "NOT ends_with(trim(gold_solution), 'Answer: ' || gold_answer))").fetchall()[0]
    (rows,) = con.execute("SELECT count(*) FROM problems").fetchall()[0]
    desc = f"{rows} problems, all with a consistent gold answer" if not bad else f"{bad} problems lack a gold answer"
    return CheckOutcome(bad == 0, desc, {"rows": rows, "bad": bad})
