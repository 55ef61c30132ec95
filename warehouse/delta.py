"""Delta Lake commits (delta-rs) for the warehouse: append, predicate replace, predicate delete, snapshots.

Every change is one Delta commit, so readers see a table version whole or not at all, and concurrent
writers are ordered by the commit protocol (put-if-absent of the next log entry, on local disk and on
S3). A commit that loses a race to a conflicting one is retried from the new table state; a writer killed
mid-write leaves only unreferenced Parquet files, which ``vacuum`` deletes (warehouse/maintenance.py).
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar
from urllib.parse import unquote

import pyarrow as pa
from deltalake import CommitProperties, DeltaTable, WriterProperties, write_deltalake
from deltalake.exceptions import CommitFailedError, TableNotFoundError
from pyarrow.fs import FileSelector, FileType

from warehouse.constants import COMMIT_ATTEMPTS, DELTA_PARTITIONS
from warehouse.location import filesystem, storage_options

log = logging.getLogger(__name__)
T = TypeVar("T")

# zstd like the earlier layout: text-heavy rows compress 3-5x.
_WRITER_PROPS = WriterProperties(compression="ZSTD")


def quote(value: str) -> str:
    """``value`` as a SQL string literal for a delta-rs predicate."""
    return "'" + value.replace("'", "''") + "'"


def predicate(**equals: str) -> str:
    """An AND of column = value tests, e.g. ``source = 'a' AND day = '2024-01-01'``."""
    return " AND ".join(f"{col} = {quote(val)}" for col, val in equals.items())


class VersionVacuumed(LookupError):
    """A past version of a table whose files vacuum deleted (beyond the retention window): it cannot be read."""


def open_table(uri: str, version: int | None = None) -> DeltaTable | None:
    """The Delta table at ``uri`` (at ``version`` when given), or None when no table exists there yet. A
    ``version`` whose files vacuum deleted raises :class:`VersionVacuumed`."""
    try:
        table = DeltaTable(uri, version=version, storage_options=storage_options(uri))
    except TableNotFoundError:
        if version is not None and DeltaTable.is_deltatable(uri, storage_options(uri)):
            raise
        return None
    if version is not None:
        _check_readable(uri, table, version)
    return table


def _check_readable(uri: str, table: DeltaTable, version: int) -> None:
    """Raise :class:`VersionVacuumed` if files of ``table`` (``uri`` at ``version``) are gone, naming a newer
    version whose files are all there (one listing of the table's folder, a few versions opened)."""
    stored = _stored(uri)
    missing = _missing(table, stored)
    if not missing:
        return
    name = uri.rstrip("/").rsplit("/", 1)[-1]
    readable = _newer_readable(uri, version, stored)
    if readable is None:
        raise VersionVacuumed(f"version {version} of table {name} lacks {missing} of its files and no newer version "
                              "is whole: the table is damaged; restore its folder from a backup")
    raise VersionVacuumed(f"version {version} of table {name} was vacuumed (beyond retention): {missing} of its "
                          f"files are gone; read a newer version, e.g. version {readable}")


def _stored(uri: str) -> set[str]:
    """The paths of the files under the table at ``uri``, relative to it."""
    fs, base = filesystem(uri)
    infos = fs.get_file_info(FileSelector(base, recursive=True))
    return {info.path[len(base) + 1:] for info in infos if info.type == FileType.File}


def _missing(table: DeltaTable, stored: set[str]) -> int:
    """How many data files of ``table``'s version are not in ``stored``."""
    paths = pa.table(table.get_add_actions(flatten=False)).column("path").to_pylist()
    return sum(unquote(path) not in stored for path in paths)


def _newer_readable(uri: str, version: int, stored: set[str]) -> int | None:
    """A whole version (its files all in ``stored``) after ``version``, found by bisection. Vacuum deletes the
    files removed before its cutoff, so every version from the last such removal on is whole; an older one may be
    whole too (nothing it held was removed before the cutoff), so the one found is not always the oldest."""
    newest = DeltaTable(uri, storage_options=storage_options(uri)).version()

    def whole(v: int) -> bool:
        return not _missing(DeltaTable(uri, version=v, storage_options=storage_options(uri)), stored)

    if newest <= version or not whole(newest):
        return None
    low, high = version + 1, newest  # high is whole
    while low < high:
        middle = (low + high) // 2
        low, high = (low, middle) if whole(middle) else (middle + 1, high)
    return high


def retry_commit(action: Callable[[], T], what: str) -> T:
    """Run ``action`` until it commits and return its result; a commit that conflicts with a concurrent one is
    retried after a short random pause. ``action`` must start from the table's current state (open it anew)."""
    for attempt in range(COMMIT_ATTEMPTS):
        try:
            return action()
        except CommitFailedError as exc:
            if attempt == COMMIT_ATTEMPTS - 1:
                raise RuntimeError(f"{what}: {COMMIT_ATTEMPTS} commits lost to concurrent writers ({exc}); "
                                   "retry it, or run fewer writers on one partition") from exc
            log.debug("%s: lost to a concurrent commit, retrying (attempt %d): %s", what, attempt + 2, exc)
            time.sleep(random.uniform(0.01, 0.05) * (attempt + 1))
    raise AssertionError("unreachable: the loop returns or raises")


def commit_rows(uri: str, data: pa.Table, *, replace_where: str | None, metadata: Mapping[str, str]) -> int | None:
    """Append ``data`` to the table at ``uri`` (creating it, partitioned by :data:`DELTA_PARTITIONS`), or with
    ``replace_where`` swap the rows matching that predicate for ``data`` in one commit. An empty ``data``
    with ``replace_where`` only deletes. Returns the table version after the commit (None: nothing to do)."""
    props = CommitProperties(custom_metadata=dict(metadata))
    opts = storage_options(uri)

    def attempt() -> int | None:
        table = open_table(uri)
        if data.num_rows == 0:
            if table is None or not replace_where:
                return None
            table.delete(replace_where, writer_properties=_WRITER_PROPS, commit_properties=props)
            return table.version()  # delta-rs moves the table object to the version it committed
        if table is None:
            try:
                write_deltalake(uri, data, partition_by=list(DELTA_PARTITIONS), mode="append", storage_options=opts,
                                writer_properties=_WRITER_PROPS, commit_properties=props)
            except Exception as exc:  # another writer created it first: commit again onto its table
                if open_table(uri) is None:
                    raise
                raise CommitFailedError(str(exc)) from exc
            return 0  # a new table had nothing to replace
        write_deltalake(table, data, mode="overwrite" if replace_where else "append", predicate=replace_where,
                        writer_properties=_WRITER_PROPS, commit_properties=props)
        return table.version()

    return retry_commit(attempt, f"commit to {uri}")


def history(uri: str, limit: int | None = None) -> list[dict[str, Any]]:
    """The table's commits, newest first: version, timestamp, operation and the writer's metadata."""
    table = open_table(uri)
    return [] if table is None else list(table.history(limit))
