"""Atomic file writes: a reader sees the old export or the new one, never half of one."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
import uuid
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, BinaryIO

from prm.export.encodable import dumps_strict, utf8_rows


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


def write_jsonl(rows: Iterable[Mapping[str, Any]], path: str | Path) -> Path:
    """One JSON object per line (UTF-8, ``ensure_ascii=False`` so ``ки`` stays readable), written atomically;
    strict JSON: lone surrogates become U+FFFD and NaN or infinities null (:mod:`prm.export.encodable`)."""
    lines = [dumps_strict(row) + "\n" for row in utf8_rows(rows, f"{path} rows")]
    return atomic_write_text(path, "".join(lines))


def json_kind(value: Any) -> str:
    """The JSON name of a parsed value's type, for messages about what a line held instead of an object.

    >>> json_kind([1, 2]), json_kind("abc"), json_kind(True), json_kind(None)
    ('an array', 'a string', 'a boolean', 'null')
    """
    kinds = ((bool, "a boolean"), (int | float, "a number"), (str, "a string"), (list, "an array"),
             (dict, "an object"))
    return next((name for cls, name in kinds if isinstance(value, cls)), "null" if value is None else
                type(value).__name__)


def read_jsonl_lines(path: str | Path) -> list[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for every non-blank line of a JSONL file; an error names the file and line
    that does not parse or holds something other than an object."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist; write it first (prm.export) or fix the path")
    rows = []
    with path.open("rb") as f:  # bytes, decoded line by line, so a bad byte is reported with its line
        for n, raw in enumerate(f, 1):
            if not raw.strip():
                continue
            try:
                row = json.loads(raw.decode("utf-8"))
            except UnicodeDecodeError as err:
                raise ValueError(f"{path}:{n}: not UTF-8 (byte {raw[err.start]:#04x} at offset {err.start}); "
                                 "re-encode the file as UTF-8 or export it again") from None
            except json.JSONDecodeError as err:
                raise ValueError(f"{path}:{n}: not JSON ({err.msg} at column {err.colno}); fix the line or "
                                 "export the file again") from None
            except RecursionError:
                raise ValueError(f"{path}:{n}: JSON nested too deeply to read (Python's parser stops at about "
                                 f"{sys.getrecursionlimit()} levels); a row is an object of strings and lists of "
                                 "steps and labels - fix the line or export the file again") from None
            if not isinstance(row, dict):
                raise ValueError(f"{path}:{n}: {json_kind(row)}, not a JSON object; every line of a JSONL file "
                                 "is one row object, e.g. {\"prompt\": ..., \"completions\": [...], \"labels\": [...]}")
            rows.append((n, row))
    return rows


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """The objects of a JSONL file; an error names the line that does not parse or is not an object."""
    return [row for _, row in read_jsonl_lines(path)]


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
