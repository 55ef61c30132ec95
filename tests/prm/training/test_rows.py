"""Row checks name the row, its origin (file:line) and the field, and say what to fix."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from prm.training.rows import check_both_classes, check_rows, locate_rows

GOOD = {"prompt": "2+3 =", "completions": ["2+3 = 5"], "labels": [True]}


@pytest.mark.parametrize("row,match", [
    ({"prompt": "q", "completions": "abc", "labels": [True, False, True]},
     r"^row 1: field 'completions' is a str \('abc'\), not a list of steps"),
    ({"prompt": "q", "completions": ["ok"], "labels": True}, r"^row 1: field 'labels' is a bool \(True\), not a list"),
    ({"prompt": "q", "completions": ["ok"], "labels": "1"}, r"^row 1: field 'labels' is a str"),
    ({"prompt": "q", "completions": ["ok", "  \n"], "labels": [True, False]},
     r"^row 1: completions\[1\] is whitespace only \('  \\n'\); every step needs text"),
    ({"prompt": "q", "completions": ["ok", ""], "labels": [True, False]}, r"^row 1: completions\[1\] is empty"),
    ({"prompt": "q", "completions": ["ok", 3], "labels": [True, False]}, r"^row 1: completions\[1\] is a int"),
    ({"prompt": " ", "completions": ["ok"], "labels": [True]}, r"^row 1: field 'prompt' must be a non-empty string"),
    ({"prompt": "q", "completions": ["a", "b"], "labels": [True, 0.4]}, r"^row 1 labels\[1\]: label 0.4 is soft"),
    ([1, 2], r"^row 1: a list \(\[1, 2\]\), not a row object"),
    ({"prompt": "q", "completions": ["a"], "labels": [True], "solution_id": "s7", "split": "dev"},
     r"^row 1 \(solution s7\): split 'dev' is not one of .*; fix the row's 'split'"),
])
def test_malformed_rows_name_the_row_and_field(row, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        check_rows([GOOD, row], "hard")


def test_jsonl_rows_are_located_by_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    bad = {"prompt": "q", "completions": "abc", "labels": [True, False, True]}
    path.write_text(json.dumps(GOOD) + "\n\n" + json.dumps(bad) + "\n")
    rows, where = locate_rows(path)
    assert where == [f"{path}:1", f"{path}:3"]
    with pytest.raises(ValueError, match=rf"^{re.escape(str(path))}:3: field 'completions' is a str"):
        check_rows(rows, "hard", where)


@pytest.mark.parametrize("text,match", [
    ('{"prompt": "q"}\n{oops\n', r"rows.jsonl:2: not JSON \(Expecting property name"),
    ("[1, 2]\n", r"rows.jsonl:1: an array, not a JSON object; every line of a JSONL file is one row object"),
    ('"abc"\n', r"rows.jsonl:1: a string, not a JSON object"),
])
def test_unreadable_jsonl_lines_are_named(tmp_path: Path, text: str, match: str) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text(text)
    with pytest.raises(ValueError, match=match):
        locate_rows(path)


def test_a_line_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_bytes(json.dumps(GOOD).encode() + b"\n" + b'{"prompt": "\xff"}\n')
    with pytest.raises(ValueError, match=r"rows.jsonl:2: not UTF-8 \(byte 0xff"):
        locate_rows(path)


def test_parquet_rows_are_located_by_row(tmp_path: Path) -> None:
    path = tmp_path / "rows.parquet"
    pq.write_table(pa.Table.from_pylist([GOOD, {**GOOD, "completions": [" "]}]), path)
    rows, where = locate_rows(path)
    with pytest.raises(ValueError, match=rf"^{re.escape(str(path))} row 1: completions\[0\] is whitespace only"):
        check_rows(rows, "hard", where)


def test_one_class_errors_name_their_real_cause() -> None:
    """All-bad labels come from a policy that never reaches the gold answer: the old message advised sampling at a
    higher temperature, which makes that worse; now it names the cause and the fixes."""
    with pytest.raises(ValueError, match="all 3 step labels are bad") as bad:
        check_both_classes([{"labels": [False, False]}, {"labels": [0.1]}], "the train rows")
    assert "reaches the gold answer" in str(bad.value) and "answer-format instruction" in str(bad.value)
    assert "stronger policy" in str(bad.value) and "sample at a higher temperature" not in str(bad.value)
    with pytest.raises(ValueError, match="all 2 step labels are good") as good:
        check_both_classes([{"labels": [True, 0.9]}], "the train rows")
    assert "sample at a higher temperature" in str(good.value)
