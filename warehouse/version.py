"""The warehouse's schema version and storage format: one marker file per root, checked on open.

A warehouse written by an older version is refused with what to do, never read with silently missing
columns: the hive-partitioned Parquet layout of earlier releases migrates with ``prm-warehouse migrate``;
a schema version this code does not read must be re-materialized.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow as pa

from warehouse.constants import FORMAT, MARKER
from warehouse.location import filesystem, is_remote
from warehouse.schemas import SCHEMA_VERSION, TABLES


class SchemaVersionError(RuntimeError):
    """The warehouse on disk was written with another schema version or storage format."""


def _read_marker(root: str) -> dict | None:
    fs, path = filesystem(root)
    try:
        with fs.open_input_stream(f"{path}/{MARKER}") as fh:
            return json.loads(fh.read())
    except FileNotFoundError:  # pyarrow raises it for a missing local file and a missing object alike
        return None
    except (OSError, ValueError, pa.ArrowException) as exc:
        raise SchemaVersionError(f"warehouse marker {root}/{MARKER} is unreadable ({exc}); "
                                 "restore it or move the folder aside") from None


def legacy_tables(root: str) -> list[str]:
    """Tables of ``root`` in the pre-Delta layout (``<table>/source=*/day=*/*.parquet``, no ``_delta_log``)."""
    if is_remote(root):
        return []
    base = Path(root)
    return [t for t in sorted(TABLES) if (base / t).is_dir() and not (base / t / "_delta_log").is_dir()
            and next((base / t).glob("source=*/day=*/*.parquet"), None) is not None]


def stored_format(root: str) -> tuple[int, str] | None:
    """(schema version, format) the root declares; None for an empty root. Pre-marker data is version 1."""
    marker = _read_marker(root)
    if marker is not None:
        try:
            return int(marker["schema_version"]), str(marker.get("format", "parquet"))
        except (KeyError, TypeError, ValueError, AttributeError):
            raise SchemaVersionError(f"warehouse marker {root}/{MARKER} holds {marker!r}, not "
                                     '{"schema_version": N, "format": ...}; restore it or move the folder aside'
                                     ) from None
    return (1, "parquet") if legacy_tables(root) else None


def check_version(root: str) -> tuple[int, str] | None:
    """Raise :class:`SchemaVersionError` when ``root`` holds data this code must not read as is; else the
    (version, format) its marker declares (None: an empty root, no marker yet)."""
    found = stored_format(root)
    if found is None:
        return None
    version, fmt = found
    if version != SCHEMA_VERSION:
        raise SchemaVersionError(
            f"warehouse {root} holds schema version {version}, this code reads version {SCHEMA_VERSION} "
            "(version 2 added steps.char_start/char_end and solutions.prompt_version); "
            "move the folder aside or delete it (`make clean-data` for the default data/warehouse) "
            "and re-materialize the partitions you need"
        )
    if fmt != FORMAT:
        raise SchemaVersionError(
            f"warehouse {root} is in the Parquet-folder layout of earlier releases, this code reads Delta tables; "
            f"convert it in place with `prm-warehouse migrate --root {root}` (the old files are kept aside)"
        )
    return found


def stamp_version(root: str) -> None:
    """Check the version, then write the marker if it is missing (one atomic put)."""
    if check_version(root) is not None:  # a marker of this version and format is there
        return
    fs, path = filesystem(root)
    fs.create_dir(path, recursive=True)
    body = json.dumps({"schema_version": SCHEMA_VERSION, "format": FORMAT}) + "\n"
    tmp = f"{path}/.{MARKER}.{os.getpid()}" if not is_remote(root) else f"{path}/{MARKER}"
    with fs.open_output_stream(tmp) as fh:  # an object-store put is atomic; a local file is renamed
        fh.write(body.encode())
    if tmp != f"{path}/{MARKER}":
        fs.move(tmp, f"{path}/{MARKER}")
