"""Commits into one partition folder: atomic for readers, safe against concurrent writers and kills.

A write puts its rows in a hidden temp file (:func:`write_temp`), then :func:`commit` takes the
partition's lock (``flock``: the kernel releases it when the holder dies) and

- for an append, renames the temp file into place;
- for a replace, records a journal (the new file and the old files it supersedes), deletes the old
  files, renames the new one into place and drops the journal.

So readers never see old and new rows side by side (between the delete and the rename they see
neither), and two replacing writers serialize: the later one deletes the earlier one's file, never
its own. The journal is the commit point: a writer killed after it is finished by the next commit
in that folder or by :func:`recover`; one killed before it leaves only a temp file, which
:func:`recover` deletes once its writer is dead.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import socket
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from warehouse.constants import JOURNAL_PREFIX, LOCK_NAME, STALE_TEMP_AGE_S, TMP_PREFIX

# Temp files are named ``<TMP_PREFIX><final name>@<host>.<pid>`` so a sweep can tell a dead writer's
# file from a live one's; a pid only means something on its own host.
_HOST = re.sub(r"[^A-Za-z0-9_.-]", "_", socket.gethostname()) or "host"


def temp_path(final: Path) -> Path:
    """The hidden temp name this process uses while writing ``final``."""
    return final.with_name(f"{TMP_PREFIX}{final.name}@{_HOST}.{os.getpid()}")


def _fsync(path: Path) -> None:
    with open(path, "rb") as fh:
        os.fsync(fh.fileno())


def write_temp(data: pa.Table, final: Path) -> Path:
    """Write ``data`` to a hidden temp file next to ``final``, flushed to disk; returns its path."""
    tmp = temp_path(final)
    try:
        pq.write_table(data, tmp, compression="zstd")
        _fsync(tmp)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return tmp


@contextmanager
def partition_lock(folder: Path) -> Iterator[None]:
    """Hold the exclusive lock of one partition folder (which must exist)."""
    fd = os.open(folder / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def commit(folder: Path, tmp: Path | None, final: Path | None, replace_prefix: str | None = None) -> tuple[Path, ...]:
    """Publish ``tmp`` as ``final`` in ``folder``; with ``replace_prefix``, delete the committed files
    with that name prefix first, as one step for readers. Returns the deleted files.

    ``tmp`` and ``final`` are None for a replace with zero rows (it only deletes). The temp file is
    gone when this returns or raises, unless the journal holds it for :func:`recover` to finish.
    """
    journal = None
    try:
        with partition_lock(folder):
            _finish_journals(folder)  # a killed replace in this folder completes before anything new
            doomed = tuple(sorted(folder.glob(f"{replace_prefix}*.parquet"))) if replace_prefix else ()
            if doomed:
                journal = _write_journal(folder, tmp, final, doomed)
                _finish(folder, journal)
            elif tmp is not None and final is not None:
                os.replace(tmp, final)
            return doomed
    finally:
        if journal is None and tmp is not None:
            tmp.unlink(missing_ok=True)  # not committed, or already renamed (then this is a no-op)


def delete_committed(folder: Path, prefix: str) -> list[Path]:
    """Delete the committed files of ``folder`` whose names start with ``prefix``; returns them."""
    with partition_lock(folder):
        _finish_journals(folder)  # else a killed replace finished later would bring rows back
        doomed = sorted(folder.glob(f"{prefix}*.parquet"))
        for path in doomed:
            path.unlink(missing_ok=True)
    return doomed


def _write_journal(folder: Path, tmp: Path | None, final: Path | None, doomed: tuple[Path, ...]) -> Path:
    """Record a replace; once the journal is in place the replace counts as committed."""
    spec = {"publish": [tmp.name, final.name] if tmp is not None and final is not None else None,
            "delete": [p.name for p in doomed]}
    journal = folder / f"{JOURNAL_PREFIX}{uuid.uuid4().hex}.json"
    staging = temp_path(journal)
    try:
        staging.write_text(json.dumps(spec))
        _fsync(staging)
    except BaseException:
        staging.unlink(missing_ok=True)
        raise
    os.replace(staging, journal)  # the commit point: nothing may follow it in this function
    return journal


def _finish(folder: Path, journal: Path) -> None:
    """Carry out a journal (idempotent, so a kill during it is finished by the next call)."""
    try:
        spec = json.loads(journal.read_text())
    except (OSError, ValueError) as exc:
        raise RuntimeError(f"replace journal {journal} is unreadable ({exc}); it names the files one replace "
                           "added and removed: inspect it and the folder, then delete it") from None
    for name in spec["delete"]:
        (folder / name).unlink(missing_ok=True)
    if spec["publish"]:
        tmp, final = (folder / name for name in spec["publish"])
        if tmp.exists():
            os.replace(tmp, final)
    journal.unlink()


def _finish_journals(folder: Path) -> None:
    for journal in sorted(folder.glob(f"{JOURNAL_PREFIX}*.json")):
        _finish(folder, journal)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by another user
        return True
    return True


def _abandoned(tmp: Path, now: float) -> bool:
    """Whether ``tmp`` belongs to a writer that can no longer finish it."""
    try:
        age = now - tmp.stat().st_mtime
    except FileNotFoundError:
        return False
    host, _, pid = tmp.name.rpartition("@")[2].rpartition(".")
    if "@" in tmp.name and host == _HOST and pid.isdigit() and not _alive(int(pid)):
        return True
    return age > STALE_TEMP_AGE_S


def recover(root: Path) -> list[Path]:
    """Finish the replaces of killed writers and delete their temp files under ``root``.

    Returns the temp files deleted. Temp files of live writers (on this host) stay.
    """
    marked = (p for p in root.glob("*/source=*/day=*/.*") if p.name.startswith((TMP_PREFIX, JOURNAL_PREFIX)))
    removed: list[Path] = []
    for folder in sorted({p.parent for p in marked}):
        with partition_lock(folder):
            _finish_journals(folder)  # first: a journal may name a temp file it still has to publish
            now = time.time()
            for tmp in sorted(folder.glob(f"{TMP_PREFIX}*")):
                if _abandoned(tmp, now):
                    tmp.unlink(missing_ok=True)
                    removed.append(tmp)
    return removed
