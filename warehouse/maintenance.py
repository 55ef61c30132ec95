"""Table maintenance: compaction of small files, vacuum of unreferenced ones, a log checkpoint.

The pipeline commits many small writes (a labeler writes chunk by chunk), so a table collects small files;
compaction rewrites each partition's into few large ones (a new version; readers of the old one are not
disturbed). Vacuum deletes files no version newer than the retention window references: those replaced
or compacted away, and the orphans of writers killed before their commit. Time travel reaches back as far
as the retention window.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from deltalake import DeltaTable

from warehouse.constants import VACUUM_RETENTION_HOURS
from warehouse.delta import open_table, retry_commit
from warehouse.store import Warehouse


@dataclass(frozen=True)
class TableMaintenance:
    """What maintenance did to one table."""

    table: str
    version_before: int
    version_after: int
    files_before: int
    files_after: int
    files_compacted: int  # small files rewritten into larger ones
    files_vacuumed: int  # unreferenced files deleted (listed only, with dry_run)

    def as_row(self) -> dict[str, int | str]:
        return asdict(self)


def maintain_table(wh: Warehouse, table: str, *, retention_hours: int = VACUUM_RETENTION_HOURS,
                   dry_run: bool = False) -> TableMaintenance | None:
    """Compact, vacuum and checkpoint ``table``; None when it was never written. With ``dry_run`` nothing
    changes and ``files_vacuumed`` counts what vacuum would delete."""
    found = open_table(wh.uri(table))
    if found is None:
        return None
    before, files_before = found.version(), len(found.file_uris())
    compacted = 0
    if not dry_run:
        compacted = retry_commit(lambda: _compact(found), f"compaction of {table}")
    # A retention shorter than Delta's default is the caller's explicit choice (tests, a full bucket).
    vacuumed = found.vacuum(retention_hours=retention_hours, dry_run=dry_run,
                            enforce_retention_duration=retention_hours >= VACUUM_RETENTION_HOURS, full=True)
    if not dry_run:  # compact and vacuum moved ``found`` to the versions they committed
        found.create_checkpoint()  # readers replay the log from here instead of from version 0
    return TableMaintenance(table=table, version_before=before, version_after=found.version(),
                            files_before=files_before, files_after=len(found.file_uris()),
                            files_compacted=compacted, files_vacuumed=len(vacuumed))


def _compact(table: DeltaTable) -> int:
    """Compact ``table`` from its newest version (moving it to the version compaction commits); returns the files
    rewritten. A concurrent commit that removed some of them (a replace) fails it, for a retry from the new one."""
    table.update_incremental()
    return int(table.optimize.compact().get("numFilesRemoved", 0))


def maintain(wh: Warehouse, *, retention_hours: int = VACUUM_RETENTION_HOURS, dry_run: bool = False,
             tables: list[str] | None = None) -> list[TableMaintenance]:
    """:func:`maintain_table` over ``tables`` (default: every table); tables never written are skipped."""
    done = (maintain_table(wh, t, retention_hours=retention_hours, dry_run=dry_run) for t in tables or wh.tables())
    return [m for m in done if m is not None]
