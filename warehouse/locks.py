"""Exclusive locks for read-then-write sequences that span partitions (``Warehouse.table_lock``).

Delta commits need no lock; this is for logic above them, e.g. "append only the question ids no other
partition holds", which two parallel runs must not interleave. ``flock``: the kernel releases the lock
when its holder dies. For an object-store root the lock file lives in the local cache, so it orders the
processes of one host; runs on several hosts must not draw the same source's ids at once.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from warehouse.constants import LOCK_DIR
from warehouse.location import is_remote


def lock_path(root: str, name: str) -> Path:
    """The lock file of ``name`` under ``root`` (created with its folder)."""
    if is_remote(root):
        cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "prm-pipeline" / "locks"
        folder = cache / hashlib.sha256(root.encode()).hexdigest()[:16]
    else:
        folder = Path(root) / LOCK_DIR
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{name}.lock"


@contextmanager
def exclusive(path: Path) -> Iterator[None]:
    """Hold the exclusive lock on ``path`` until the block ends (or the process dies)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock
