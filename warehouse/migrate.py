"""Convert a warehouse of the earlier Parquet-folder layout into Delta tables, with one command.

The old layout is ``<root>/<table>/source=<s>/day=<d>/part-<writer>-<run_id>-<hex>.parquet``. Every table
becomes one Delta table holding the same rows, with the writer taken from the file name, in one commit per
table. Row counts are compared before anything is swapped; in place, the old folder is kept aside as
``<root>.parquet-backup-<time>`` (delete it once you are satisfied).
"""

from __future__ import annotations

import datetime as dt
import shutil
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from deltalake import CommitProperties, write_deltalake

from warehouse.constants import DELTA_PARTITIONS, MARKER, WRITER_COLUMN
from warehouse.location import is_remote, normalize, storage_options, table_uri
from warehouse.schemas import SCHEMA_VERSION, TABLES, delta_schema
from warehouse.store import Warehouse
from warehouse.validate import SchemaError, validate_rows
from warehouse.version import legacy_tables, stamp_version, stored_format


class MigrationError(RuntimeError):
    """The old warehouse cannot be migrated as is."""


@dataclass(frozen=True)
class Migrated:
    """Where the Delta warehouse now is, the rows per table, and where the old files were kept."""

    root: str
    rows: dict[str, int]
    backup: str | None
    skipped: tuple[str, ...] = ()  # files left out with skip_invalid, and why


def writer_of(path: Path) -> str:
    """The writer named in an old part file's name (``part-<writer>-<run_id>-<hex>.parquet``)."""
    name = path.name.removeprefix("part-")
    return name.split("-", 1)[0] or "unknown"


def _legacy_table(root: Path, table: str, skip_invalid: bool, skipped: list[str]) -> pa.Table:
    """Every committed row of one old-layout table with source, day and writer from its path, each file
    validated against the current schema. An invalid file raises (naming it), or with ``skip_invalid`` is left
    out and listed in ``skipped``."""
    parts = []
    for path in sorted((root / table).glob("source=*/day=*/*.parquet")):
        if path.name.startswith("."):
            continue  # a temp file of a killed writer: never committed
        try:
            data = pq.read_table(path)
            for name, value in (("source", path.parent.parent.name.removeprefix("source=")),
                                ("day", path.parent.name.removeprefix("day="))):
                data = data.append_column(name, pa.array([value] * data.num_rows, pa.string()))
            data = validate_rows(table, TABLES[table], data, {})
        except (OSError, pa.ArrowException, SchemaError) as exc:
            if not skip_invalid:
                raise MigrationError(f"{path}: {exc}; fix or delete that file, or pass --skip-invalid to leave it "
                                     "out (it stays in the old folder)") from None
            skipped.append(f"{path.relative_to(root)}: {exc}")
            continue
        parts.append(data.append_column(WRITER_COLUMN, pa.array([writer_of(path)] * data.num_rows, pa.string())))
    if not parts:
        return delta_schema(table).empty_table()
    return pa.concat_tables([p.cast(delta_schema(table)) for p in parts])


def _copy(source: Path, target: str, stamp: str, skip_invalid: bool, skipped: list[str]) -> dict[str, int]:
    """Write every old table as a Delta table under ``target``, one table in memory at a time; returns the rows
    per table after reading them back."""
    rows: dict[str, int] = {}
    for table in legacy_tables(str(source)):
        full = _legacy_table(source, table, skip_invalid, skipped)
        if not full.num_rows:
            continue
        write_deltalake(table_uri(target, table), full, partition_by=list(DELTA_PARTITIONS), mode="error",
                        storage_options=storage_options(target),
                        commit_properties=CommitProperties(custom_metadata={"prm_operation": "migrate",
                                                                            "run_id": f"migrate-{stamp}"}))
        rows[table] = full.num_rows
    stamp_version(target)
    back = Warehouse(target)
    got = {t: back.read(t).num_rows for t in rows}
    if got != rows:
        raise MigrationError(f"row counts differ after migration (old {rows}, new {got}); {source} is untouched")
    return rows


def migrate(root: str | Path, to: str | None = None, skip_invalid: bool = False) -> Migrated:
    """Migrate the old-layout warehouse at ``root`` to Delta tables at ``to`` (default: in place). A file that
    does not validate against the current schema stops the migration, naming it, unless ``skip_invalid``."""
    source = Path(normalize(root))
    if is_remote(str(root)) or not source.is_dir():
        raise MigrationError(f"{root} is not a local folder; the old layout only ever lived on local disk")
    found = stored_format(str(source))
    if found is None:
        raise MigrationError(f"{source} holds no warehouse data; nothing to migrate")
    if found[1] == "delta":
        raise MigrationError(f"{source} is already a Delta warehouse")
    if found[0] != SCHEMA_VERSION:
        raise MigrationError(f"{source} holds schema version {found[0]}, migration needs version {SCHEMA_VERSION}; "
                             "re-materialize the partitions you need instead")
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")
    target = normalize(to) if to else f"{source}.delta-migrating-{stamp}"
    if not is_remote(target) and Path(target).exists() and any(Path(target).iterdir()):
        raise MigrationError(f"target {target} exists and is not empty; pick an empty or new location")
    skipped: list[str] = []
    try:
        rows = _copy(source, target, stamp, skip_invalid, skipped)
    except BaseException:
        if not to:  # the staging copy is ours: leave nothing half-made beside the untouched warehouse
            shutil.rmtree(target, ignore_errors=True)
        raise
    if to:
        return Migrated(root=target, rows=rows, backup=None, skipped=tuple(skipped))
    backup = Path(f"{source}.parquet-backup-{stamp}")
    source.rename(backup)
    Path(target).rename(source)
    for extra in backup.iterdir():  # anything beside the tables (an inbox, notes) stays with the warehouse
        if extra.name not in TABLES and extra.name != MARKER and not (source / extra.name).exists():
            shutil.move(str(extra), source / extra.name)
    return Migrated(root=str(source), rows=rows, backup=str(backup), skipped=tuple(skipped))
