"""The warehouse: hive-partitioned Parquet files under one root, written atomically.

Layout: ``<root>/<table>/source=<source>/day=<YYYY-MM-DD>/part-<writer>-<run_id>.parquet``.
A write validates every row first, writes a hidden temp file in the target folder and renames it
into place, so a killed run leaves no partial ``*.parquet`` file for DuckDB to read.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from warehouse.config import default_root
from warehouse.schemas import PARTITION_COLUMNS, TABLES, file_schema
from warehouse.validate import Rows, SchemaError, validate_rows

_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
TMP_PREFIX = ".tmp-"


def _safe(value: str, what: str) -> str:
    cleaned = _SAFE.sub("_", value).strip("._")
    if not cleaned:
        raise ValueError(f"{what} {value!r} has no usable characters; use letters, digits, '_', '-' or '.'")
    return cleaned


def today() -> str:
    """Today's date in UTC as YYYY-MM-DD, the default ``day`` partition."""
    return dt.datetime.now(dt.UTC).date().isoformat()


def new_run_id() -> str:
    """A fresh run id for writes made outside a Dagster run."""
    return f"local-{dt.datetime.now(dt.UTC):%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:8]}"


@dataclass(frozen=True)
class WriteResult:
    """Where a write landed and how many rows it holds."""

    table: str
    path: Path
    rows: int
    replaced: tuple[Path, ...] = ()


class Warehouse:
    """Parquet tables under ``root``; DuckDB reads them through :meth:`connect`.

    >>> import tempfile
    >>> wh = Warehouse(tempfile.mkdtemp())
    >>> wh.tables()
    ['judgments', 'label_audit', 'problems', 'rollouts', 'solutions', 'step_labels', 'steps', 'verifications']
    """

    def __init__(self, root: str | os.PathLike[str] | None = None) -> None:
        self.root = Path(root) if root is not None else default_root()

    def tables(self) -> list[str]:
        return sorted(TABLES)

    def schema(self, table: str) -> pa.Schema:
        if table not in TABLES:
            raise KeyError(f"unknown table {table!r}; the warehouse has {self.tables()}")
        return TABLES[table]

    def partition_dir(self, table: str, source: str, day: str) -> Path:
        if not _DAY.match(day):
            raise ValueError(f"day {day!r} is not YYYY-MM-DD")
        return self.root / table / f"source={_safe(source, 'source')}" / f"day={day}"

    def files(self, table: str) -> list[Path]:
        """Every committed Parquet file of ``table`` (temp files are never listed)."""
        self.schema(table)
        base = self.root / table
        return sorted(p for p in base.glob("source=*/day=*/*.parquet") if not p.name.startswith("."))

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
        extra_defaults: Mapping[str, Any] | None = None,
    ) -> WriteResult:
        """Validate ``rows`` and write them as one new file in partition (source, day).

        ``writer`` names who wrote the file (default: the table); with ``replace=True`` the
        writer's earlier files in that partition are removed after the new file is in place,
        which makes re-materializing a partition idempotent. Raises SchemaError before
        touching the disk if any row is bad.
        """
        schema = self.schema(table)
        day = day or today()
        run_id = run_id or new_run_id()
        defaults = {"run_id": run_id, "created_at": dt.datetime.now(dt.UTC), "source": source, "day": day,
                    **(extra_defaults or {})}
        if isinstance(rows, pa.Table) and set(PARTITION_COLUMNS) & set(rows.column_names):
            rows = rows.drop_columns([c for c in PARTITION_COLUMNS if c in rows.column_names])
        elif not isinstance(rows, pa.Table) and isinstance(rows, Mapping):
            rows = {k: v for k, v in rows.items() if k not in PARTITION_COLUMNS}
        elif not isinstance(rows, pa.Table | Mapping):
            rows = [{k: v for k, v in row.items() if k not in PARTITION_COLUMNS} for row in rows]
        data = validate_rows(table, schema, rows, defaults).select(file_schema(table).names)
        data = data.cast(file_schema(table))
        folder = self.partition_dir(table, source, day)
        folder.mkdir(parents=True, exist_ok=True)
        name = f"part-{_safe(writer or table, 'writer')}-{_safe(run_id, 'run_id')}-{uuid.uuid4().hex[:6]}.parquet"
        final = folder / name
        _atomic_write_parquet(data, final)
        replaced: tuple[Path, ...] = ()
        if replace:
            prefix = f"part-{_safe(writer or table, 'writer')}-"
            replaced = tuple(p for p in folder.glob(f"{prefix}*.parquet") if p != final)
            for path in replaced:
                path.unlink(missing_ok=True)
        return WriteResult(table=table, path=final, rows=data.num_rows, replaced=replaced)

    def read(self, table: str) -> pa.Table:
        """All rows of ``table`` as Arrow, partition columns included (empty table if none)."""
        return self._read_files(table, self.files(table))

    def delete_partition(self, table: str, source: str, day: str, writer: str | None = None) -> list[Path]:
        """Remove the committed files of one partition (only ``writer``'s when given); returns them."""
        folder = self.partition_dir(table, source, day)
        prefix = f"part-{_safe(writer, 'writer')}-" if writer else "part-"
        doomed = sorted(folder.glob(f"{prefix}*.parquet")) if folder.exists() else []
        for path in doomed:
            path.unlink(missing_ok=True)
        return doomed

    def read_partition(self, table: str, source: str, day: str) -> pa.Table:
        """Rows of one (source, day) partition of ``table`` (empty table if none)."""
        folder = self.partition_dir(table, source, day)
        files = sorted(p for p in folder.glob("*.parquet") if not p.name.startswith(".")) if folder.exists() else []
        return self._read_files(table, files)

    def _read_files(self, table: str, files: list[Path]) -> pa.Table:
        """``files`` of ``table`` as one Arrow table with the partition columns (empty table if none)."""
        if not files:
            return self.schema(table).empty_table()
        names = self.schema(table).names
        return pa.concat_tables([_with_partition(pq.read_table(p), p).select(names) for p in files],
                                promote_options="default")

    def remove_stale_temp_files(self) -> list[Path]:
        """Delete temp files left by killed writers; returns what was removed."""
        stale = [p for p in self.root.glob(f"*/source=*/day=*/{TMP_PREFIX}*")]
        for path in stale:
            path.unlink(missing_ok=True)
        return stale


def _with_partition(data: pa.Table, path: Path) -> pa.Table:
    day = path.parent.name.removeprefix("day=")
    source = path.parent.parent.name.removeprefix("source=")
    return data.append_column("source", pa.array([source] * data.num_rows, pa.string())).append_column(
        "day", pa.array([day] * data.num_rows, pa.string())
    )


def _atomic_write_parquet(data: pa.Table, final: Path) -> None:
    tmp = final.with_name(f"{TMP_PREFIX}{final.name}.{os.getpid()}")
    try:
        pq.write_table(data, tmp, compression="zstd")
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, final)
    finally:
        tmp.unlink(missing_ok=True)


__all__ = ["SchemaError", "Warehouse", "WriteResult", "new_run_id", "today"]
