"""Dataset files read row by row: JSON lines, a JSON array, a Parquet table.

A dropped-in file is hostile input. Whatever one row can raise (bytes that are not UTF-8, text that is not JSON,
JSON nested deeper than Python's parser goes, an integer longer than Python converts, a Parquet value no Python
object holds) sets that row aside with its reason, and the rows after it are still read. Only a fault of the whole
file (a JSON array whose brackets do not parse, a file that is not Parquet) is a ValueError naming the file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from prm.files import json_line

# (line, row, None) for a row read, (line, raw, why) for a row set aside: ``line`` is the 1-based line of a JSONL
# file or the row number in a JSON array or Parquet table, ``raw`` the row's text on one line (bytes), so a rewrite
# of the file keeps the row for the loader to reject again (a Parquet row: ``why`` as a JSON string), ``why`` the
# reason.
Row = tuple[int, Any, str | None]

_JSONL_FIX = "write one JSON object per line"
_WHITESPACE = re.compile(r"[ \t\r\n]*")  # JSON's whitespace (RFC 8259, section 2)
# What nesting depends on in JSON text: a string (its escapes included; no overlap between the alternatives,
# so the match is linear), an opening or closing bracket, a comma.
_NESTING = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{},]', re.DOTALL)
_PARQUET_BATCH = 4_096  # rows converted to Python at once; a batch that fails is converted row by row


def _json_lines(path: Path) -> Iterator[Row]:
    with path.open("rb") as handle:
        for line, raw in enumerate(handle, start=1):
            raw = raw.removeprefix(b"\xef\xbb\xbf") if line == 1 else raw
            if not raw.strip():
                continue
            try:
                row = json_line(raw)
            except ValueError as exc:
                yield line, raw.rstrip(b"\r\n"), f"{exc}; {_JSONL_FIX}"
                continue
            yield line, row, None


def _value_end(text: str, start: int) -> int:
    """Where the JSON value at ``start`` ends (its ',' or ']' in the array), found by brackets alone: for a row
    the parser could not read, so the rows after it still can be."""
    depth = 0
    for token in _NESTING.finditer(text, start):
        kind = token.group()[0]
        if kind in "[{":
            depth += 1
        elif kind in "]}" or (kind == "," and depth == 0):
            if depth == 0:
                return token.start()
            depth -= 1
    return len(text)


def _skip(text: str, at: int) -> int:
    """The first index from ``at`` that is not JSON whitespace."""
    return _WHITESPACE.match(text, at).end()


def _where(text: str, at: int) -> str:
    return f"line {text.count(chr(10), 0, at) + 1} column {at - text.rfind(chr(10), 0, at)}"


def _json_array(path: Path, data: bytes) -> list[Row]:
    """The rows of a JSON array, parsed one at a time so a row too deep or too long is set aside alone; the whole
    array is read before any row is returned, so a file whose brackets do not parse yields no row."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path} is not UTF-8 text (byte {data[exc.start]:#04x} at offset {exc.start}); save it as "
                         "UTF-8") from None
    decoder, rows = json.JSONDecoder(), []
    at = _skip(text, text.index("[") + 1)
    closed = text.startswith("]", at)  # an empty array
    while not closed:
        n = len(rows) + 1
        try:
            row, end = decoder.raw_decode(text, at)
            rows.append((n, row, None))
        except json.JSONDecodeError as exc:
            raise ValueError(f"{path} is not a valid JSON array (row {n}: {exc.msg} at {_where(text, exc.pos)}); "
                             "fix it or write it as JSONL") from None
        except (RecursionError, ValueError):  # too deep or too long: json_line says which
            end = _value_end(text, at)
            raw = text[at:end].replace("\n", " ").strip().encode()
            try:
                rows.append((n, json_line(raw), None))  # read after all (the stack was shallower here)
            except ValueError as why:
                rows.append((n, raw, f"{why}; fix the row"))
        at = _skip(text, end)
        if text.startswith(",", at):
            at = _skip(text, at + 1)
        elif text.startswith("]", at):
            closed = True
        else:
            raise ValueError(f"{path} is not a valid JSON array (after row {n}: expected ',' or ']' at "
                             f"{_where(text, at)}); fix it or write it as JSONL")
    if _skip(text, at + 1) != len(text):
        raise ValueError(f"{path} is not a valid JSON array (text after its closing ']' at {_where(text, at)}); "
                         "fix it or write it as JSONL")
    return rows


def _parquet(path: Path) -> Iterator[Row]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(path)
    except (pa.ArrowException, OSError) as exc:
        raise ValueError(f"{path} is not a readable Parquet file ({exc}); re-export it or use JSONL") from exc
    for start in range(0, table.num_rows, _PARQUET_BATCH):
        batch = table.slice(start, _PARQUET_BATCH)
        try:
            rows = batch.to_pylist()
        except (pa.ArrowException, ValueError, OverflowError):  # e.g. a timestamp past year 9999: find its row
            rows = None
        if rows is not None:
            yield from ((start + i, row, None) for i, row in enumerate(rows, start=1))
            continue
        for i in range(batch.num_rows):
            try:
                row = batch.slice(i, 1).to_pylist()[0]
            except (pa.ArrowException, ValueError, OverflowError) as exc:
                why = f"a value of this row cannot be read into Python ({exc}); fix or drop it"
                yield start + i + 1, json.dumps(why).encode(), why
                continue
            yield start + i + 1, row, None


def file_rows(path: Path) -> Iterator[Row]:
    """The rows of a local ``.jsonl``, ``.json`` (an array, else JSON lines) or ``.parquet`` file, each read or set
    aside on its own (:data:`Row`); ValueError naming the file for a fault of the whole file.

    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "rows.jsonl"
    >>> _ = path.write_bytes(b'{"question": "1+1?"}\\n{"n": ' + b"9" * 5000 + b'}\\n')
    >>> [(line, error is None) for line, _, error in file_rows(path)]
    [(1, True), (2, False)]
    """
    if path.suffix == ".parquet":
        yield from _parquet(path)
        return
    if path.suffix == ".json":
        with path.open("rb") as handle:
            starts_with_array = handle.read(64).lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"[")
        if starts_with_array:
            yield from _json_array(path, path.read_bytes())
            return
    yield from _json_lines(path)
