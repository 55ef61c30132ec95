"""``python -m prm.training train``: bad data and paths end in one line that says what, where and what to do."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from prm.training.__main__ import main

GOOD = {"prompt": "2+3 =", "completions": ["2+3 = 5", "5*2 = 11"], "labels": [True, False]}


def _lines(*rows: object) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows)


@pytest.mark.parametrize("text,match", [
    (_lines(GOOD, "", {"prompt": "q", "completions": "abc", "labels": [True, False, True]}),
     r"rows\.jsonl:3: field 'completions' is a str \('abc'\), not a list of steps; give one string per step"),
    (_lines({"prompt": "q", "completions": ["ok", "   "], "labels": [True, False]}),
     r"rows\.jsonl:1: completions\[1\] is whitespace only"),
    (_lines({"prompt": "q", "completions": ["ok"], "labels": True}), r"rows\.jsonl:1: field 'labels' is a bool"),
    (_lines(GOOD, "[1, 2]"), r"rows\.jsonl:2: an array, not a JSON object"),
    (_lines(GOOD, "{oops"), r"rows\.jsonl:2: not JSON \(.*\); fix the line"),
    ("", r"rows\.jsonl holds no rows \(an empty file\?\); write TRL stepwise rows"),
    (_lines({**GOOD, "split": "val"}), r"none of the 1 rows is a train row \(splits \{'val': 1\}\); set 'split'"),
])
def test_bad_rows_end_in_one_error_line(text: str, match: str, tiny_base: Path, tmp_path: Path, capsys) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_text(text)
    code = main(["train", "--data", str(data), "--out", str(tmp_path / "prm"), "--base-model", str(tiny_base),
                 "--max-steps", "1"])
    err = capsys.readouterr().err
    assert code == 1
    assert err.startswith("Error: ") and len(err.strip().splitlines()) == 1, err
    assert re.search(match, err), err
    assert not (tmp_path / "prm").exists()


def test_out_that_is_a_file_is_refused_before_training(tiny_base: Path, tmp_path: Path, capsys) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_text(_lines(GOOD))
    out = tmp_path / "taken"
    out.write_text("not a folder")
    code = main(["train", "--data", str(data), "--out", str(out), "--base-model", str(tiny_base), "--max-steps", "1"])
    err = capsys.readouterr().err
    assert code == 1 and len(err.strip().splitlines()) == 1, err
    assert f"Error: the output {out} is an existing file" in err and "pass a new folder path" in err
    assert out.read_text() == "not a folder"
