"""GSM8K and MATH500 loading from ../shared/data, answer normalisation, and generated sources."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from prm.format import split_steps
from prm.tasks import ArithmeticSourceConfig, generate_arithmetic, load_problems
from prm.tasks.datasets import normalize_gsm8k_answer, strip_calculator_annotations
from verifiers import extract_answer


def test_gsm8k_loads_with_normalised_answers(shared_file) -> None:
    loaded = load_problems(shared_file("gsm8k/test.jsonl"))
    problems = loaded.records
    assert len(problems) == 1319 and loaded.rejected == () and loaded.duplicates == ()
    first = problems[0]
    assert first.task == "gsm8k" and first.gold_answer == "18"
    assert first.problem_id.startswith("gsm8k-")
    assert len({p.problem_id for p in problems}) == len(problems)
    assert all(p.gold_answer.lstrip("-").replace(".", "").isdigit() for p in problems)
    assert "####" not in first.gold_solution


def test_math500_loads_with_its_answer_field(shared_file) -> None:
    problems = load_problems(shared_file("math500/test.jsonl")).records
    assert len(problems) == 500
    first = problems[0]
    assert first.task == "math"
    assert first.gold_answer == r"\left( 3, \frac{\pi}{2} \right)"
    assert json.loads(json.dumps(first.meta))["subject"] == "Precalculus"


def test_limit_and_missing_file(tmp_path, shared_file) -> None:
    assert len(load_problems(shared_file("gsm8k/test.jsonl"), limit=5).records) == 5
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_problems(tmp_path / "missing.jsonl")


def test_a_local_jsonl_without_answers_is_a_clear_error(tmp_path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"question": "2+2?", "solution": "it is four"}) + "\n")
    with pytest.raises(ValueError, match="no gold answer"):
        load_problems(path)


def _jsonl(path, *rows) -> None:
    """Write ``rows`` one per line: dicts as JSON, bytes and str as they are."""
    lines = [r if isinstance(r, bytes) else (r if isinstance(r, str) else json.dumps(r)).encode() for r in rows]
    path.write_bytes(b"\n".join(lines) + b"\n")


def test_rows_whose_gold_answer_cannot_be_extracted_are_rejected_with_file_and_line(tmp_path) -> None:
    path = tmp_path / "gsm8k_nohash.jsonl"
    _jsonl(
        path,
        {"question": "Tom has 2 apples and buys 3. How many?", "answer": "2+3=<<2+3=5>>5\n#### 5"},
        # A GSM8K solution whose '####' line was lost: it used to become a math problem with the paragraph as gold.
        {"question": "Ann has 4 pens and loses 1. How many?", "answer": "She loses one.\n4-1=<<4-1=3>>3 pens left."},
        {"question": "2+2?", "answer": "4"},  # a bare final answer stays usable
        {"question": "3+3?", "answer": "#### "},
        {"problem": "x?", "solution": "We cannot tell."},
    )
    loaded = load_problems(path)
    assert [(r.task, r.gold_answer) for r in loaded.records] == [("gsm8k", "5"), ("math", "4")]
    assert [(r.file, r.line) for r in loaded.rejected] == [(str(path), 2), (str(path), 4), (str(path), 5)]
    assert "without a '#### <answer>' line" in loaded.rejected[0].reason
    assert "'####' line of 'answer' is empty" in loaded.rejected[1].reason
    assert "no gold answer" in loaded.rejected[2].reason
    assert str(loaded.rejected[0]).startswith(f"{path}:2: ")


def test_hostile_rows_are_rejected_one_by_one_and_repeated_questions_kept_once(tmp_path) -> None:
    path = tmp_path / "hostile.jsonl"
    good = {"question": "What is 1+1?", "answer": "1+1=2\n#### 2"}
    _jsonl(
        path,
        good,
        {"question": 7, "answer": "#### 7"},  # used to raise TypeError for the whole file
        b"\x00\xff\xfe binary \x89PNG",  # used to raise DatasetGenerationError for the whole file
        '{"question": "unterminated',
        "[1, 2]",
        "",
        {**good, "answer": "2\n#### 2"},  # the same question again: the same problem id
        {"question": "What is 2+2?", "answer": "#### 4"},
    )
    loaded = load_problems(path)
    assert [r.gold_answer for r in loaded.records] == ["2", "4"]
    assert len({r.problem_id for r in loaded.records}) == 2
    reasons = {r.line: r.reason for r in loaded.rejected}
    assert sorted(reasons) == [2, 3, 4, 5]
    assert "'question' is int" in reasons[2] and "not UTF-8" in reasons[3]
    assert "not JSON (" in reasons[4] and "JSON list" in reasons[5]
    assert [(d.line, d.reason) for d in loaded.duplicates] == [(7, "repeats the question of line 1")]


def test_files_with_no_usable_row_name_the_file(tmp_path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(ValueError, match=r"empty\.jsonl is empty"):
        load_problems(empty)
    binary = tmp_path / "binary.jsonl"
    binary.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(ValueError, match=r"binary\.jsonl has no usable row .*binary\.jsonl:2: not UTF-8"):
        load_problems(binary)
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"PAR1 not really parquet")
    with pytest.raises(ValueError, match=r"broken\.parquet is not a readable Parquet file"):
        load_problems(broken)


def test_parquet_and_json_array_rows_are_numbered(tmp_path) -> None:
    rows = [{"question": "1+1?", "answer": "#### 2"}, {"question": "2+2?", "answer": None}]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "rows.parquet")
    (tmp_path / "rows.json").write_text(json.dumps(rows))
    for name in ("rows.parquet", "rows.json"):
        loaded = load_problems(tmp_path / name)
        assert [r.gold_answer for r in loaded.records] == ["2"] and [r.line for r in loaded.rejected] == [2]


def test_extraction_recovers_every_gsm8k_gold_answer(shared_file) -> None:
    for line in shared_file("gsm8k/test.jsonl").read_text().splitlines():
        answer = json.loads(line)["answer"]
        assert extract_answer(answer) == normalize_gsm8k_answer(answer)[1]


def test_extraction_recovers_math500_boxed_answers(shared_file) -> None:
    rows = [json.loads(line) for line in shared_file("math500/test.jsonl").read_text().splitlines()]
    boxed = [r for r in rows if "\\boxed" in r["solution"]]
    assert len(boxed) >= 490
    # The dataset's `answer` field is the last boxed expression of the solution, up to spacing.
    mismatches = [r for r in boxed if extract_answer(r["solution"]).replace(" ", "") != r["answer"].replace(" ", "")]
    assert len(mismatches) <= 10, [(extract_answer(r["solution"]), r["answer"]) for r in mismatches[:5]]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("12+7 = 19\nAnswer: 19", "19"),
        ("Final answer: 3/4.", "3/4"),
        ("The answer is: $42$", "42"),
        (r"so $\boxed{\frac{1}{2}}$ and Answer: 3", r"\frac{1}{2}"),
        (r"\boxed{x^{2}+1}", "x^{2}+1"),
        ("She pays 5*3=<<5*3=15>>15\n#### 1,500", "1500"),
        (r"\boxed{unbalanced", None),
        ("", None),
        ("Answer:", None),
    ],
)
def test_extract_answer_table(text: str, expected: str | None) -> None:
    assert extract_answer(text) == expected


def test_gsm8k_helpers() -> None:
    assert strip_calculator_annotations("48/2 = <<48/2=24>>24") == "48/2 = 24"
    with pytest.raises(ValueError, match="####"):
        normalize_gsm8k_answer("no marker")


def test_generated_sources_are_seeded_and_carry_ground_truth() -> None:
    config = ArithmeticSourceConfig(n_ops=(2, 8), styles=("chain", "word"), per_level=5)
    first, again = generate_arithmetic(config, seed=3), generate_arithmetic(config, seed=3)
    assert [r.problem_id for r in first] == [r.problem_id for r in again]
    assert first != generate_arithmetic(config, seed=4)
    for record in first:
        steps = split_steps(record.gold_solution)
        assert len(steps) == record.n_gold_steps == len(record.meta["intermediates"])
        assert extract_answer(record.gold_solution) == record.gold_answer == str(record.meta["intermediates"][-1])
    assert {r.task for r in first} == {"arith_chain", "arith_word"}
