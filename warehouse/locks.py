"""Exclusive locks for read-then-write sequences that span partitions (``Warehouse.table_lock``).

Delta commits need no lock; this is for logic above them, e.g. "append only the question ids no other
partition holds", which two parallel runs must not interleave. A local root uses ``flock`` on
``<root>/.locks/<table>.lock``: the kernel releases the lock when its holder dies. An object-store root
(``s3://``) has no shared disk, so its lock is a lease in a Delta table at ``<root>/.locks/<table>``
(warehouse/lease.py), which holds across hosts.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from warehouse.constants import LOCK_DIR
from warehouse.lease import lease
from warehouse.location import is_remote


def lock_path(root: str, name: str) -> Path:
    """The lock file of ``name`` under a local ``root`` (created with its folder)."""
    folder = Path(root) / LOCK_DIR
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{name}.lock"


@contextmanager
def named_lock(root: str, name: str) -> Iterator[None]:
    """Hold the lock ``name`` of the warehouse at ``root`` for the block, across processes (and, for an
    object-store root, across hosts)."""
    if is_remote(root):
        with lease(f"{root}/{LOCK_DIR}/{name}"):
            yield
    else:
        with exclusive(lock_path(root, name)):
            yield


@contextmanager
def exclusive(path: Path, timeout_s: float | None = None, poll_s: float = 0.1) -> Iterator[None]:
    """Hold the exclusive ``flock`` on ``path`` (created with its folder) until the block ends or the process dies:
    the kernel releases it then, so a crash never leaves a stale lock. ``timeout_s``: raise TimeoutError after
    waiting that long (None waits for ever)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        if timeout_s is None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        else:
            deadline = time.monotonic() + timeout_s
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"waited {timeout_s:.0f} s for lock {path}: another process holds it; "
                                           "wait for it or kill it, then retry") from None
                    time.sleep(poll_s)
        yield
    finally:
        os.close(fd)  # releases the lock
