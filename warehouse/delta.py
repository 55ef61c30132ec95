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

import pyarrow as pa
from deltalake import CommitProperties, DeltaTable, WriterProperties, write_deltalake
from deltalake.exceptions import CommitFailedError, TableNotFoundError

from warehouse.constants import COMMIT_ATTEMPTS, DELTA_PARTITIONS
from warehouse.location import storage_options

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


def open_table(uri: str, version: int | None = None) -> DeltaTable | None:
    """The Delta table at ``uri`` (at ``version`` when given), or None when no table exists there yet."""
    try:
        return DeltaTable(uri, version=version, storage_options=storage_options(uri))
    except TableNotFoundError:
        if version is not None and DeltaTable.is_deltatable(uri, storage_options(uri)):
            raise
        return None


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
