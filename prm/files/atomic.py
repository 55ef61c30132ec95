"""Atomic file writes: a reader sees the old file or folder or the new one, never half of one."""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO


def atomic_write(path: str | os.PathLike[str], write: Callable[[BinaryIO], None]) -> Path:
    """Call ``write`` on a temp file beside ``path``, fsync it, then ``os.replace`` it into place: the one atomic
    file writer (text, JSON, plots)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    data = text.encode("utf-8")
    return atomic_write(path, lambda f: f.write(data))


def atomic_write_dir(folder: str | Path, build: Callable[[Path], None]) -> Path:
    """Fill a temp folder beside ``folder`` with ``build``, then swap it in.

    POSIX cannot replace a non-empty directory in one step, so the old folder is first renamed aside and
    removed after the swap: a reader sees the old folder, briefly none, or the new one, never a partial one.
    """
    folder = Path(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = folder.with_name(f".{folder.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        build(tmp)
        old = folder.with_name(f".{folder.name}.{uuid.uuid4().hex[:8]}.old")
        if folder.exists():
            os.replace(folder, old)
        os.replace(tmp, folder)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return folder
