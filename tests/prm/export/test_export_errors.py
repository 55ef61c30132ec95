"""Math-Shepherd round trips whatever the problem ends with; malformed rows and files are one clear error naming
the file and line (issue 38 items 9 and 13)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prm.export import read_math_shepherd, read_trl_stepwise, write_math_shepherd
from prm.files import read_jsonl
from prm.training.rows import load_rows

ROW = {"prompt": "2+3 =", "completions": ["2+3 = 5", "Answer: 5"], "labels": [True, True]}


@pytest.mark.parametrize("problem", ["What is Step 1:", "What is Step 1: ", "A Step 1: B", "Hmm.\n Step 1:"])
def test_a_problem_that_would_not_split_back_is_refused(tmp_path: Path, problem: str) -> None:
    """ "What is Step 1:" was written and read back as problem "What is" plus an extra step."""
    with pytest.raises(ValueError, match="could not be split back into problem and steps"):
        write_math_shepherd([{**ROW, "prompt": problem}], tmp_path / "ms.jsonl")


@pytest.mark.parametrize("problem", ["Step 1: add 2 and 3.", "What is Step 1", "What is Step 1:x", "Step 1:",
                                     "What is Step 2: ", "What is step 1: "])
def test_problems_that_mention_steps_round_trip(tmp_path: Path, problem: str) -> None:
    rows = [{**ROW, "prompt": problem}]
    assert read_math_shepherd(write_math_shepherd(rows, tmp_path / "ms.jsonl")) == rows


@pytest.mark.parametrize("change,match", [
    ({"label": 5}, r"ms\.jsonl:1: 'label' is a number, not a string"),
    ({"input": ["2+3 = Step 1: 5 ки"]}, r"ms\.jsonl:1: 'input' is an array, not a string"),
    ({"label": None}, r"ms\.jsonl:1: 'label' is null, not a string"),
    ({"input": None, "label": None}, r"'input' is null"),
])
def test_a_math_shepherd_row_of_the_wrong_type_is_one_clear_error(tmp_path: Path, change: dict, match: str) -> None:
    path = write_math_shepherd([ROW], tmp_path / "ms.jsonl")
    item = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps(item | change) + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=match):
        read_math_shepherd(path)


def test_a_math_shepherd_row_without_a_key_names_it(tmp_path: Path) -> None:
    path = tmp_path / "ms.jsonl"
    path.write_text('\n{"input": "x Step 1: y ки"}\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"ms\.jsonl:2: no 'label' key"):
        read_math_shepherd(path)


@pytest.mark.parametrize("reader", [read_jsonl, read_trl_stepwise, load_rows, read_math_shepherd])
def test_jsonl_nested_100k_deep_is_a_clear_error(tmp_path: Path, reader) -> None:
    path = tmp_path / "deep.jsonl"
    path.write_text(json.dumps(ROW) + "\n" + "[" * 100_000 + "]" * 100_000 + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"deep\.jsonl:2: JSON nested too deeply"):
        reader(path)


def test_a_processbench_row_whose_steps_are_a_string_is_one_clear_error(tmp_path: Path) -> None:
    from prm.export import read_processbench

    path = tmp_path / "pb.jsonl"
    path.write_text(json.dumps({"id": "a", "problem": "q", "steps": "abc", "label": -1}) + "\n")
    with pytest.raises(ValueError, match=r"pb\.jsonl:1: steps must be a non-empty list of step strings, got a string"):
        read_processbench(path)
