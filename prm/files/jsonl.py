"""JSONL files: one strict JSON object per line, written atomically, read back with errors that name the line."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from prm.files.atomic import atomic_write_text
from prm.files.encodable import dumps_strict, utf8_rows


def write_jsonl(rows: Iterable[Mapping[str, Any]], path: str | Path) -> Path:
    """One JSON object per line (UTF-8, ``ensure_ascii=False`` so ``ки`` stays readable), written atomically;
    strict JSON: lone surrogates become U+FFFD and NaN or infinities null (:mod:`prm.files.encodable`)."""
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
