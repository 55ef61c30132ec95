"""The warehouse's schema version on disk: one marker file per root, checked on open, written on first write.

A warehouse written by an older version (no marker, or an older number) is refused with what to do,
never read with silently missing columns (``union_by_name`` would fill them with nulls).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from warehouse.schemas import SCHEMA_VERSION, TABLES

MARKER = "warehouse.json"


class SchemaVersionError(RuntimeError):
    """The warehouse on disk was written with another schema version."""


def _has_data(root: Path) -> bool:
    return any(next((root / t).glob("source=*/day=*/*.parquet"), None) for t in TABLES if (root / t).is_dir())


def stored_version(root: Path) -> int | None:
    """The version the marker declares; 1 for a pre-marker warehouse with data; None for an empty root."""
    marker = root / MARKER
    if marker.is_file():
        return int(json.loads(marker.read_text())["schema_version"])
    return 1 if _has_data(root) else None


def check_version(root: str | os.PathLike[str]) -> None:
    """Raise :class:`SchemaVersionError` when ``root`` holds data of another schema version."""
    found = stored_version(Path(root))
    if found is not None and found != SCHEMA_VERSION:
        raise SchemaVersionError(
            f"warehouse {root} holds schema version {found}, this code reads version {SCHEMA_VERSION} "
            "(version 2 added steps.char_start/char_end and solutions.prompt_version); "
            f"move the folder aside or delete it (`make clean-data` for the default {Path('data/warehouse')}) "
            "and re-materialize the partitions you need"
        )


def stamp_version(root: str | os.PathLike[str]) -> None:
    """Check the version, then write the marker if it is missing (atomically)."""
    path = Path(root)
    check_version(path)
    marker = path / MARKER
    if not marker.is_file():
        path.mkdir(parents=True, exist_ok=True)
        tmp = path / f".{MARKER}.{os.getpid()}"
        tmp.write_text(json.dumps({"schema_version": SCHEMA_VERSION}) + "\n")
        os.replace(tmp, marker)
