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
def exclusive(path: Path) -> Iterator[None]:
    """Hold the exclusive lock on ``path`` until the block ends (or the process dies)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock
