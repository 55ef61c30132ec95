"""Whole-file digests of model files, read in chunks (a 500 MB safetensors never sits in memory whole).

:func:`file_sha256` remembers a file's digest per process by its identity and stat (device, inode, size,
modification time in ns): a file rewritten, truncated or replaced is hashed again; one read again unchanged (or
renamed into place, as a finished build is) is not. A file modified in the last ``SETTLE_S`` is never remembered:
the kernel stamps modification times from a coarse clock (a jiffy, 1-10 ms), so two writes that close together
can leave the same stat.
"""

from __future__ import annotations

import hashlib
import threading
import time
from pathlib import Path
from typing import Any

CHUNK_BYTES = 1 << 20  # read size: large enough that the hash, not the syscalls, costs the time
_KNOWN: dict[tuple[int, int, int, int], str] = {}  # (st_dev, st_ino, st_size, st_mtime_ns) -> sha256 hex
_KNOWN_LOCK = threading.Lock()
SETTLE_S = 2.0  # seconds since its last modification before a file's digest is remembered


def stream_into(digest: Any, path: Path) -> None:
    """Feed the whole of ``path`` into ``digest`` (a hashlib object), ``CHUNK_BYTES`` at a time."""
    with path.open("rb") as f:
        while chunk := f.read(CHUNK_BYTES):
            digest.update(chunk)


def file_sha256(path: str | Path) -> str:
    """sha256 of the whole file at ``path`` (hex), remembered per process while the file's stat is unchanged.

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "w.bin"
    >>> _ = p.write_bytes(b"abc")
    >>> file_sha256(p)[:12]
    'ba7816bf8f01'
    """
    path = Path(path)
    st = path.stat()
    key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    with _KNOWN_LOCK:
        known = _KNOWN.get(key)
    if known is not None:
        return known
    digest = hashlib.sha256()
    stream_into(digest, path)
    if time.time_ns() - st.st_mtime_ns > SETTLE_S * 1e9 and path.stat().st_mtime_ns == st.st_mtime_ns:
        with _KNOWN_LOCK:
            _KNOWN[key] = digest.hexdigest()
    return digest.hexdigest()
