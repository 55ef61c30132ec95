"""The warehouse: one Delta Lake table per warehouse table under one root (a folder or ``s3://`` URI).

Layout: ``<root>/<table>/`` is a Delta table partitioned by (source, day, writer); ``<root>/warehouse.json``
holds the schema version. A write validates every row first, then commits them as one Delta commit: an
append, or with ``replace=True`` a predicate overwrite of the writer's rows in that partition, so readers
never see a half-written or a half-replaced partition and concurrent writers never lose rows.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from deltalake import DeltaTable

from warehouse.config import default_root
from warehouse.constants import WRITER_COLUMN
from warehouse.delta import commit_rows, history, open_table, predicate
from warehouse.location import normalize, table_uri
from warehouse.locks import named_lock
from warehouse.schemas import PARTITION_COLUMNS, TABLES, delta_schema
from warehouse.validate import Rows, SchemaError, validate_rows
from warehouse.version import check_version, stamp_version

# A source or writer is a folder name (``source=<value>``): letters, digits, '_', '-', '.', neither first nor last
# a '.' or '_'. Exactly the values earlier releases stored unchanged (they replaced other characters by '_' and
# stripped '.' and '_' from the ends), so every partition already written keeps its name.
# ``\A...\Z``, not ``^...$``: ``$`` also matches before a final newline, so "arith\n" passed and wrote the folder
# ``source=arith%0A``. ASCII digits only: ``\d`` also takes other scripts' digits ("٢٠٢٦").
_PARTITION_VALUE = re.compile(r"\A[A-Za-z0-9-](?:[A-Za-z0-9_.-]*+(?<=[A-Za-z0-9-]))?\Z")
_DAY = re.compile(r"\A[0-9]{4}-[0-9]{2}-[0-9]{2}\Z")


def is_partition_value(value: object) -> bool:
    """Whether ``value`` names a partition folder as it is (the rule of ``_PARTITION_VALUE``).

    >>> is_partition_value("my-data_v2"), is_partition_value("a/b"), is_partition_value("data_")
    (True, False, False)
    """
    return isinstance(value, str) and bool(_PARTITION_VALUE.match(value))


def _partition_value(value: str, what: str) -> str:
    """``value`` if it can name a partition folder as it is; a value that would have to be altered (``a/b``
    stored as ``a_b`` would merge with source ``a_b``) is refused."""
    if not is_partition_value(value):
        raise ValueError(f"{what} {value!r} cannot name a partition: use only letters, digits, '_', '-' and '.', "
                         "not starting or ending with '.' or '_' (e.g. 'gsm8k', 'my-data_v2')")
    return value


def _check_day(day: str) -> str:
    if not _DAY.match(day):
        raise ValueError(f"day {day!r} is not YYYY-MM-DD")
    try:
        dt.date.fromisoformat(day)
    except ValueError as exc:
        raise ValueError(f"day {day!r} is not a calendar date YYYY-MM-DD ({exc})") from None
    return day


def today() -> str:
    """Today's date in UTC as YYYY-MM-DD, the default ``day`` partition."""
    return dt.datetime.now(dt.UTC).date().isoformat()


def new_run_id() -> str:
    """A fresh run id for writes made outside a Dagster run."""
    return f"local-{dt.datetime.now(dt.UTC):%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:8]}"


@dataclass(frozen=True)
class WriteResult:
    """What a write committed: the partition it landed in (None when nothing was committed), the rows
    added, the rows a replace removed, and the table version after it (None when nothing was committed)."""

    table: str
    path: str | None
    rows: int
    replaced: int = 0
    version: int | None = None


class Warehouse:
    """Delta tables under ``root``; DuckDB reads a snapshot of them through :meth:`connect`.

    >>> import tempfile
    >>> wh = Warehouse(tempfile.mkdtemp())
    >>> wh.tables()[:4]
    ['judgments', 'label_audit', 'models', 'prm_evaluations']
    """

    def __init__(self, root: str | os.PathLike[str] | None = None) -> None:
        self.root = normalize(root if root is not None else default_root())
        check_version(self.root)  # an older warehouse is refused with what to do, never misread
        self._stamped = False

    def tables(self) -> list[str]:
        return sorted(TABLES)

    def schema(self, table: str) -> pa.Schema:
        if table not in TABLES:
            raise KeyError(f"unknown table {table!r}; the warehouse has {self.tables()}")
        return TABLES[table]

    def uri(self, table: str) -> str:
        """The Delta table of ``table``."""
        self.schema(table)
        return table_uri(self.root, table)

    def partition_uri(self, table: str, source: str, day: str) -> str:
        """Where partition (source, day) of ``table`` lives (validates both values)."""
        return f"{self.uri(table)}/source={_partition_value(source, 'source')}/day={_check_day(day)}"

    def version(self, table: str) -> int | None:
        """The table's current Delta version; None when nothing was ever written to it."""
        found = open_table(self.uri(table))
        return None if found is None else found.version()

    def versions(self) -> dict[str, int | None]:
        """The current version of every table: what a downstream artifact records to name its data."""
        return {t: self.version(t) for t in self.tables()}

    def files(self, table: str) -> list[str]:
        """The Parquet files of ``table``'s current version (empty when it has none)."""
        found = open_table(self.uri(table))
        return [] if found is None else sorted(found.file_uris())

    def history(self, table: str, limit: int | None = None) -> list[dict[str, Any]]:
        """``table``'s commits, newest first (version, timestamp, operation, run_id and writer)."""
        return history(self.uri(table), limit)

    def write(
        self,
        table: str,
        rows: Rows,
        *,
        source: str,
        day: str | None = None,
        run_id: str | None = None,
        writer: str | None = None,
        replace: bool = False,
        replace_where: Mapping[str, str] | None = None,
        extra_defaults: Mapping[str, Any] | None = None,
    ) -> WriteResult:
        """Validate ``rows`` and commit them to partition (source, day) as one Delta commit.

        ``writer`` names who wrote the rows (default: the table); with ``replace=True`` the writer's earlier
        rows in that partition are swapped for the new ones in the same commit (never both visible), which
        makes re-materializing a partition idempotent. ``replace_where={"model": m}`` instead swaps every row
        of the table, in any partition, whose string columns equal those values (the new rows must match too):
        e.g. a PRM's step scores, stored once per model whatever day it was evaluated. Zero rows is a normal
        write: nothing is committed (with a replace, the earlier rows are still removed). Raises SchemaError
        before touching storage if any row is bad.
        """
        if replace and replace_where:
            raise ValueError("pass replace=True (the writer's rows of the partition) or replace_where, not both")
        schema = self.schema(table)
        unknown = sorted(set(replace_where or {}) - set(delta_schema(table).names))
        if unknown:
            raise ValueError(f"replace_where names {unknown}, which {table} does not have; use its columns")
        day = _check_day(day or today())
        source_value, writer_value = _partition_value(source, "source"), _partition_value(writer or table, "writer")
        run_id = run_id or new_run_id()
        defaults = {"run_id": run_id, "created_at": dt.datetime.now(dt.UTC), "source": source, "day": day,
                    **(extra_defaults or {})}
        rows = _drop_partition_columns(rows)
        data = validate_rows(table, schema, rows, defaults)
        data = _with_partitions(data, source_value, day, writer_value).select(delta_schema(table).names)
        data = data.cast(delta_schema(table))
        match = dict(replace_where) if replace_where else {"source": source_value, "day": day, "writer": writer_value}
        where = predicate(**match) if replace or replace_where else None
        current = open_table(self.uri(table))
        replaced = _count(current, match) if where and current is not None else 0
        if data.num_rows == 0 and not replaced:
            return WriteResult(table=table, path=None, rows=0)
        self._stamp()
        operation = "replace" if where else "append"
        version = commit_rows(self.uri(table), data, replace_where=where,
                              metadata={"run_id": run_id, "writer": writer_value, "prm_operation": operation})
        return WriteResult(table=table, path=self.partition_uri(table, source, day), rows=data.num_rows,
                           replaced=replaced, version=version)

    def _stamp(self) -> None:
        """Write the root's version marker before the first commit of this instance (one read per instance)."""
        if not self._stamped:
            stamp_version(self.root)
            self._stamped = True

    @contextmanager
    def table_lock(self, table: str) -> Iterator[None]:
        """Hold ``table``'s exclusive lock: for a read-then-write across partitions (e.g. "append only ids no
        other partition holds") that parallel runs must not interleave (warehouse/locks.py)."""
        self.schema(table)
        with named_lock(self.root, table):
            yield

    def read(self, table: str, version: int | None = None) -> pa.Table:
        """All rows of ``table`` (at ``version`` when given) as Arrow, partition columns included."""
        return self._read(table, None, version)

    def read_partition(self, table: str, source: str, day: str) -> pa.Table:
        """Rows of one (source, day) partition of ``table`` (empty table if none)."""
        where = [("source", "=", _partition_value(source, "source")), ("day", "=", _check_day(day))]
        return self._read(table, where, None)

    def delete_partition(self, table: str, source: str, day: str, writer: str | None = None) -> int:
        """Delete the rows of one partition (only ``writer``'s when given) in one commit; returns how many."""
        where = {"source": _partition_value(source, "source"), "day": _check_day(day)}
        if writer:
            where["writer"] = _partition_value(writer, "writer")
        found = open_table(self.uri(table))
        doomed = _count(found, where) if found is not None else 0
        if doomed:
            commit_rows(self.uri(table), self.schema(table).empty_table(), replace_where=predicate(**where),
                        metadata={"run_id": new_run_id(), "writer": where.get("writer", ""), "prm_operation": "delete"})
        return doomed

    def _read(self, table: str, partitions: list[tuple[str, str, str]] | None, version: int | None) -> pa.Table:
        schema = self.schema(table)
        found = open_table(self.uri(table), version)
        if found is None:
            return schema.empty_table()
        data = found.to_pyarrow_dataset(partitions=partitions).to_table(columns=schema.names)
        return data.cast(schema)


def _drop_partition_columns(rows: Rows) -> Rows:
    """``rows`` without the partition columns: the write's own source and day always win. A row that is not a
    mapping is passed on as it is, for :func:`validate_rows` to refuse with its index."""
    if isinstance(rows, pa.Table):
        return rows.drop_columns([c for c in PARTITION_COLUMNS if c in rows.column_names])
    if isinstance(rows, Mapping):
        return {k: v for k, v in rows.items() if k not in PARTITION_COLUMNS}
    return [{k: v for k, v in row.items() if k not in PARTITION_COLUMNS} if isinstance(row, Mapping) else row
            for row in rows]


def _with_partitions(data: pa.Table, source: str, day: str, writer: str) -> pa.Table:
    n = data.num_rows
    for name, value in (("source", source), ("day", day), (WRITER_COLUMN, writer)):
        column = pa.array([value] * n, pa.string())
        data = data.set_column(data.schema.get_field_index(name), name, column) if name in data.column_names \
            else data.append_column(name, column)
    return data


def _count(found: DeltaTable, equals: Mapping[str, str]) -> int:
    """Rows of the table snapshot ``found`` whose columns equal ``equals`` (partition columns: no data read)."""
    expr = None
    for col, value in equals.items():
        expr = pc.field(col) == value if expr is None else expr & (pc.field(col) == value)
    return found.to_pyarrow_dataset().count_rows(filter=expr)


__all__ = ["SchemaError", "Warehouse", "WriteResult", "new_run_id", "today"]
