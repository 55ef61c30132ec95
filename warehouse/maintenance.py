"""Table maintenance: compaction of small files, vacuum of unreferenced ones, a log checkpoint.

The pipeline commits many small writes (a labeler writes chunk by chunk), so a table collects small files;
compaction rewrites each partition's into few large ones (a new version; readers of the old one are not
disturbed). Vacuum deletes the files that versions older than the retention window removed (replaced or
compacted away), and what writers killed before their commit left: unreferenced Parquet files, and on a local
root the staging files of unfinished ones. Time travel reaches back as far as the retention window.

Writers take no lock: a writer writes its Parquet files first and commits them after, so until the commit its
files look exactly like orphans. Vacuum therefore deletes an unreferenced file only once it is older than
:data:`SAFE_RETENTION_HOURS`, whatever the retention: a short retention (with ``force``) then only shortens time
travel, and never deletes a commit in flight. (A table lock around vacuum would not help: writers commit without
it, and holding it for every write would serialize all writers of a table.)
"""

from __future__ import annotations

import contextlib
import re
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from deltalake import DeltaTable
from pyarrow.fs import FileType

from warehouse.constants import VACUUM_RETENTION_HOURS
from warehouse.delta import open_table, retry_commit
from warehouse.location import filesystem, is_remote
from warehouse.store import Warehouse

# Unreferenced files younger than this may belong to a commit in flight, so vacuum never deletes them. A write
# of this pipeline takes seconds (a retried one, minutes); an hour leaves a wide margin. A retention below it is
# refused unless forced: vacuum would delete files of versions that readers and time travel may still use.
SAFE_RETENTION_HOURS = 1
# object_store (delta-rs's storage layer) writes a local file as ``<name>#<n>`` and renames it once complete. A
# writer killed meanwhile leaves it behind, and vacuum never sees it: object_store hides such names from listings.
_STAGING = re.compile(r"#\d+$")


class UnsafeRetention(ValueError):
    """A vacuum retention below :data:`SAFE_RETENTION_HOURS`, asked for without ``force``."""

    def __init__(self, hours: int) -> None:
        self.what = (f"a vacuum retention of {hours} h is below the safe floor of {SAFE_RETENTION_HOURS} h: vacuum "
                     "would delete files of versions that running readers and time travel may still use")
        super().__init__(f"{self.what}; keep retention_hours >= {SAFE_RETENTION_HOURS}, or pass force=True to "
                         "accept the risk")


def check_retention(hours: int, force: bool = False) -> None:
    """Raise :class:`UnsafeRetention` for a retention below the safe floor unless ``force``; ValueError below 0."""
    if hours < 0:
        raise ValueError(f"a vacuum retention must be >= 0 hours, got {hours}")
    if hours < SAFE_RETENTION_HOURS and not force:
        raise UnsafeRetention(hours)


@dataclass(frozen=True)
class TableMaintenance:
    """What maintenance did to one table."""

    table: str
    version_before: int
    version_after: int
    files_before: int
    files_after: int
    files_compacted: int  # small files rewritten into larger ones
    files_vacuumed: int  # removed, unreferenced and staging files deleted (counted only, with dry_run)

    def as_row(self) -> dict[str, int | str]:
        return asdict(self)


def maintain_table(wh: Warehouse, table: str, *, retention_hours: int = VACUUM_RETENTION_HOURS,
                   dry_run: bool = False, force: bool = False) -> TableMaintenance | None:
    """Compact, vacuum and checkpoint ``table``; None when it was never written. With ``dry_run`` nothing
    changes and ``files_vacuumed`` counts what vacuum would delete. A retention below
    :data:`SAFE_RETENTION_HOURS` needs ``force``."""
    check_retention(retention_hours, force)
    found = open_table(wh.uri(table))
    if found is None:
        return None
    before, files_before = found.version(), len(found.file_uris())
    compacted = 0
    if not dry_run:
        compacted = retry_commit(lambda: _compact(found), f"compaction of {table}")
    # delta-rs lists a removed file for as long as its removal is in the log (7 days), also once an earlier
    # vacuum deleted it: only the files still there are counted, and vacuum runs only when there are some.
    vacuumed = _existing(wh.uri(table), _vacuum(found, retention_hours, dry_run=True))
    if vacuumed and not dry_run:
        _vacuum(found, retention_hours, dry_run=False)
    staging = _stale_staging(wh.uri(table), max(retention_hours, SAFE_RETENTION_HOURS))
    removed = len(staging) if dry_run else _delete(staging)
    if not dry_run:  # compact and vacuum moved ``found`` to the versions they committed
        found.create_checkpoint()  # readers replay the log from here instead of from version 0
    return TableMaintenance(table=table, version_before=before, version_after=found.version(),
                            files_before=files_before, files_after=len(found.file_uris()),
                            files_compacted=compacted, files_vacuumed=len(vacuumed) + removed)


def _compact(table: DeltaTable) -> int:
    """Compact ``table`` from its newest version (moving it to the version compaction commits); returns the files
    rewritten. A concurrent commit that removed some of them (a replace) fails it, for a retry from the new one."""
    table.update_incremental()
    return int(table.optimize.compact().get("numFilesRemoved", 0))


def _vacuum(table: DeltaTable, retention_hours: int, dry_run: bool) -> set[str]:
    """Delete (list, with ``dry_run``) the files versions older than ``retention_hours`` removed, and the files no
    version references that are older than that and than :data:`SAFE_RETENTION_HOURS`; returns their paths.

    delta-rs's full vacuum judges both kinds by one retention (a removed file by its removal's time, an
    unreferenced one by its modification time), so a shorter retention for removed files is a second, lite
    vacuum, which only ever deletes removed files."""
    orphan_hours = max(retention_hours, SAFE_RETENTION_HOURS)
    # delta-rs would refuse less than the table's deletedFileRetentionDuration (7 days); this module's floor rules.
    options = {"dry_run": dry_run, "enforce_retention_duration": False}
    deleted = set(table.vacuum(retention_hours=orphan_hours, full=True, **options))
    if retention_hours < orphan_hours:
        deleted |= set(table.vacuum(retention_hours=retention_hours, full=False, **options))
    return deleted


def _existing(uri: str, paths: set[str]) -> set[str]:
    """Those of ``paths`` (relative to the table at ``uri``) that exist."""
    fs, base = filesystem(uri)
    ordered = sorted(paths)
    found = fs.get_file_info([f"{base}/{path}" for path in ordered]) if ordered else []
    return {path for path, info in zip(ordered, found, strict=True) if info.type != FileType.NotFound}


def _stale_staging(uri: str, hours: int) -> list[Path]:
    """The staging files under the table folder ``uri`` last changed over ``hours`` ago. None on an object store:
    an unfinished upload is never an object there (a bucket lifecycle rule aborts it)."""
    if is_remote(uri):
        return []
    cutoff, stale = time.time() - hours * 3600, []
    for path in Path(uri).rglob("*#*"):
        with contextlib.suppress(FileNotFoundError):  # renamed or deleted since it was listed
            if _STAGING.search(path.name) and path.is_file() and path.stat().st_mtime < cutoff:
                stale.append(path)
    return stale


def _delete(paths: list[Path]) -> int:
    """Delete ``paths``; returns how many this call deleted (a concurrent maintain may delete some first)."""
    deleted = 0
    for path in paths:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
            deleted += 1
    return deleted


def maintain(wh: Warehouse, *, retention_hours: int = VACUUM_RETENTION_HOURS, dry_run: bool = False,
             force: bool = False, tables: list[str] | None = None) -> list[TableMaintenance]:
    """:func:`maintain_table` over ``tables`` (default: every table); tables never written are skipped."""
    check_retention(retention_hours, force)  # before the first table, not after some were maintained
    done = (maintain_table(wh, t, retention_hours=retention_hours, dry_run=dry_run, force=force)
            for t in tables or wh.tables())
    return [m for m in done if m is not None]
