"""The model cache folder and a cross-process file lock for building entries in it."""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Iterator
from pathlib import Path

from prm.models.constants import DEFAULT_CACHE_DIRNAME, LOCK_POLL_S, LOCK_TIMEOUT_S, MODEL_CACHE_ENV

_PROJECT_ROOT = Path(__file__).resolve().parents[2]


def model_cache_dir() -> Path:
    """The model cache: ``$PRM_MODEL_CACHE`` if set, else ``<project>/models``.

    >>> isinstance(model_cache_dir(), Path)
    True
    """
    override = os.environ.get(MODEL_CACHE_ENV)
    return Path(override).expanduser() if override else _PROJECT_ROOT / DEFAULT_CACHE_DIRNAME


@contextlib.contextmanager
def file_lock(path: Path, timeout_s: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path`` (created if missing) for the block.

    ``flock`` is released by the kernel when the holder dies, so a crashed conversion never
    leaves a stale lock behind.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + timeout_s
    with open(path, "a+") as handle:
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise TimeoutError(
                        f"waited {timeout_s:.0f} s for lock {path}: another process is still building "
                        "this model; wait for it or kill it, then retry"
                    ) from None
                time.sleep(LOCK_POLL_S)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
