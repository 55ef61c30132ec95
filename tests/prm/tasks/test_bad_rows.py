"""One bad row of a dataset file is one rejected row: it is named with its line and reason, and the good rows
beside it are kept. Only a fault of the whole file (not a JSON array, not Parquet, no good row) is one error."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from prm.tasks import file_rows, load_problems

GOOD = {"question": "What is 1+1?", "answer": "1+1 = 2\n#### 2"}
GOOD_TOO = {"question": "What is 2+2?", "answer": "#### 4"}
DEEP = b"[" * 100_000 + b"]" * 100_000  # past Python's JSON parser (RecursionError)
HUGE = b'{"question": "How big?", "answer": ' + b"9" * 5_000 + b"}"  # past Python's 4,300-digit int limit
NOT_UTF8 = b'{"question": "caf\xe9?", "answer": "#### 1"}'  # Latin-1, not UTF-8
# Each bad row, and a word of the reason it is rejected with.
BAD_ROWS = {
    "nested_100k_deep": (DEEP, "nested too deeply"),
    "a_5000_digit_number": (HUGE, "4300 digits"),
    "not_utf8": (NOT_UTF8, "not UTF-8"),
    "nested_in_a_field": (b'{"question": "q", "answer": "#### 1", "subject": ' + b"[" * 50 + b"]" * 50 + b"}",
                          "'subject' is an array"),
}


def _jsonl(path: Path, *lines: bytes) -> Path:
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


@pytest.mark.parametrize("kind", sorted(BAD_ROWS))
def test_a_bad_jsonl_row_is_rejected_with_its_line_and_the_good_rows_kept(tmp_path: Path, kind: str) -> None:
    bad, why = BAD_ROWS[kind]
    path = _jsonl(tmp_path / "mine.jsonl", json.dumps(GOOD).encode(), bad, json.dumps(GOOD_TOO).encode())
    loaded = load_problems(path)
    assert [r.gold_answer for r in loaded.records] == ["2", "4"]
    assert [(r.file, r.line) for r in loaded.rejected] == [(str(path), 2)]
    reason = loaded.rejected[0].reason
    assert why in reason and "; " in reason and "\n" not in reason and len(reason) < 300, reason


@pytest.mark.parametrize("kind", ["nested_100k_deep", "a_5000_digit_number", "nested_in_a_field"])
def test_a_bad_json_array_row_is_rejected_with_its_number(tmp_path: Path, kind: str) -> None:
    bad, why = BAD_ROWS[kind]
    path = tmp_path / "mine.json"
    path.write_bytes(b"[\n" + json.dumps(GOOD).encode() + b",\n  " + bad + b" ,\n" + json.dumps(GOOD_TOO).encode()
                     + b"\n]\n")
    loaded = load_problems(path)
    assert [r.gold_answer for r in loaded.records] == ["2", "4"]
    assert [r.line for r in loaded.rejected] == [2] and why in loaded.rejected[0].reason


def test_bad_rows_are_yielded_with_their_raw_text_so_a_rewrite_keeps_them(tmp_path: Path) -> None:
    path = tmp_path / "mine.json"
    path.write_bytes(b"[" + json.dumps(GOOD).encode() + b",\n" + b"[" * 3000 + b"\n" + b"]" * 3000 + b"]")
    rows = list(file_rows(path))
    assert [(line, error is None) for line, _, error in rows] == [(1, True), (2, False)]
    assert rows[1][1] == b"[" * 3000 + b" " + b"]" * 3000  # one line: its newline is JSON whitespace


def test_a_parquet_row_python_cannot_hold_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "mine.parquet"
    year_20000 = 568_971_820_800 * 1_000_000  # microseconds: past datetime's year 9999 (OverflowError)
    pq.write_table(pa.table({"question": ["a?", "b?", "c?"], "answer": ["#### 1", "#### 2", "#### 3"],
                             "seen": pa.array([0, year_20000, 0], pa.timestamp("us"))}), path)
    loaded = load_problems(path)
    assert [r.gold_answer for r in loaded.records] == ["1", "3"]
    assert [r.line for r in loaded.rejected] == [2] and "cannot be read" in loaded.rejected[0].reason


# Whole-file faults: one ValueError naming the file and what to do.
WHOLE_FILE = {
    "array_not_utf8": ("x.json", b"[" + NOT_UTF8 + b"]", r"x\.json is not UTF-8 text \(byte 0xe9 .*\); save it as "
                       "UTF-8"),
    "array_cut_short": ("x.json", b"[" + json.dumps(GOOD).encode() + b",\n", r"x\.json is not a valid JSON array "
                        r"\(row 2: Expecting value at line 2 column 1\); fix it or write it as JSONL"),
    "array_bad_row": ("x.json", b'[{"question": "q",}]', r"x\.json is not a valid JSON array \(row 1: .*line 1 "
                      r"column 19\)"),
    "array_bad_separator": ("x.json", b"[1 2]", r"x\.json is not a valid JSON array \(after row 1: expected ',' or "
                            r"'\]' at line 1 column 4\)"),
    "garbage_parquet": ("x.parquet", b"PAR1 not really", r"x\.parquet is not a readable Parquet file"),
    "every_row_bad": ("x.jsonl", DEEP + b"\n" + HUGE + b"\n", r"x\.jsonl has no usable row \(2 rejected\): .*x\.jsonl"
                      r":1: JSON nested too deeply.*x\.jsonl:2: .*4300 digits"),
    "all_latin1": ("x.jsonl", NOT_UTF8 + b"\n", r"x\.jsonl has no usable row .*x\.jsonl:1: not UTF-8 \(byte 0xe9"),
}


@pytest.mark.parametrize("kind", sorted(WHOLE_FILE))
def test_a_file_without_good_rows_is_one_clear_error(tmp_path: Path, kind: str) -> None:
    name, data, expected = WHOLE_FILE[kind]
    (tmp_path / name).write_bytes(data)
    with pytest.raises(ValueError, match=expected) as info:
        load_problems(tmp_path / name)
    assert "\n" not in str(info.value)


def test_a_row_too_deep_to_check_is_rejected_not_raised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A row the parser read near its depth limit can exceed it when checked deeper in the stack (repr of a value)."""
    import prm.tasks.datasets as datasets

    check = datasets._record

    def deep_check(row, source, split):
        if row.get("question") == "deep?":
            raise RecursionError("maximum recursion depth exceeded while getting the repr of an object")
        return check(row, source, split)

    monkeypatch.setattr(datasets, "_record", deep_check)
    path = _jsonl(tmp_path / "mine.jsonl", json.dumps({**GOOD_TOO, "question": "deep?"}).encode(),
                  json.dumps(GOOD).encode())
    loaded = load_problems(path)
    assert [r.gold_answer for r in loaded.records] == ["2"]
    assert [r.line for r in loaded.rejected] == [1] and "nested too deeply" in loaded.rejected[0].reason
