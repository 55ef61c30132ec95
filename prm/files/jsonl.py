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


def json_line(raw: bytes) -> Any:
    """The JSON value of one line of a file, or ValueError saying what keeps it from being read (not UTF-8, not
    JSON, nested deeper than Python's parser goes, an integer longer than Python converts); the caller adds where
    and what to do. Every way one line can fail is a ValueError, so a reader can set that line aside alone.

    >>> json_line(b'{"a": [1]}')
    {'a': [1]}
    >>> json_line(b"[" * 100_000 + b"]" * 100_000)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: JSON nested too deeply to read (Python's parser stops at about ... levels)
    """
    try:
        return json.loads(raw.rstrip(b"\r\n").decode("utf-8"))  # no newline: a cut string says so
    except UnicodeDecodeError as err:
        raise ValueError(f"not UTF-8 (byte {raw[err.start]:#04x} at offset {err.start})") from None
    except json.JSONDecodeError as err:
        raise ValueError(f"not JSON ({err.msg} at column {err.colno})") from None
    except RecursionError:
        raise ValueError(f"JSON nested too deeply to read (Python's parser stops at about "
                         f"{sys.getrecursionlimit()} levels)") from None
    except ValueError:  # json's only other error: an integer past sys.get_int_max_str_digits()
        raise ValueError(f"an integer of more than {sys.get_int_max_str_digits()} digits, longer than Python "
                         "reads (quote it as a string)") from None

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
                row = json_line(raw)
            except ValueError as err:
                raise ValueError(f"{path}:{n}: {err}; fix the line or export the file again") from None
            if not isinstance(row, dict):
                raise ValueError(f"{path}:{n}: {json_kind(row)}, not a JSON object; every line of a JSONL file "
                                 "is one row object, e.g. {\"prompt\": ..., \"completions\": [...], \"labels\": [...]}")
            rows.append((n, row))
    return rows


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """The objects of a JSONL file; an error names the line that does not parse or is not an object."""
    return [row for _, row in read_jsonl_lines(path)]
