"""Solution files users already have (prm.tasks.solution_files): ProcessBench's real rows, each format written by the
project's own exporters and read back, malformed rows refused with one line naming file and line, rows with an
empty step or a repeated id set aside and counted, gold answers attached from GSM8K/MATH problem files, and CPU
time bounded on hostile text.

The slices in prm/evaluation/slices (shipped in the package, fixtures here) are the first 10 all-right and the first
10 wrong rows (file order) of ProcessBench's GSM8K and MATH splits, and the GSM8K test rows of those GSM8K problems,
so CI runs without ../shared/data; where ../shared/data exists the fixtures are checked against it.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from prm.evaluation import SLICES
from prm.export import (
    read_math_shepherd,
    read_processbench,
    write_math_shepherd,
    write_processbench,
    write_trl_stepwise,
)
from prm.files import write_jsonl
from prm.format import labels_from_first_error, segment
from prm.tasks import (
    SOLUTION_FORMATS,
    LoadedSolutions,
    attach_reference,
    detect_format,
    load_problems,
    load_solutions,
    stable_id,
)

FIXTURES = SLICES
GSM8K_20, MATH_20 = FIXTURES / "gsm8k.json", FIXTURES / "math.json"
GSM8K_TEST_20 = FIXTURES / "gsm8k_reference.jsonl"


def _published(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))


def _trl_rows(rows: list[dict]) -> list[dict]:
    """ProcessBench rows as the TRL stepwise rows every exporter starts from."""
    return [{"prompt": r["problem"], "completions": r["steps"], "solution_id": r["id"],
             "labels": labels_from_first_error(len(r["steps"]), r["label"])} for r in rows]


def _write(path: Path, *lines: str) -> Path:
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return path


# --- ProcessBench's real rows --------------------------------------------------------------------------------------


def test_processbench_gsm8k_reads_every_row_and_joins_the_gsm8k_test_problems(shared_file) -> None:
    loaded = load_solutions(shared_file("processbench/gsm8k.json"))
    assert (loaded.format, len(loaded.records), loaded.set_aside, loaded.n_read) == ("processbench", 400, (), 400)
    first = loaded.records[0]
    assert (first.solution_id, first.generator, first.first_error, first.line) == ("gsm8k-0", "Qwen2-7B-Instruct", 1, 1)
    assert first.step_labels is None and first.gold_answer is None and isinstance(first.final_answer_correct, bool)
    assert sum(r.first_error == -1 for r in loaded.records) == 193
    problems = {p.question: p for p in load_problems(shared_file("gsm8k/test.jsonl")).records}
    # the default source is the file's stem, "gsm8k": the source load_problems gives gsm8k/test.jsonl
    assert all(r.problem_id == problems[r.question].problem_id for r in loaded.records)
    attached, matched = attach_reference(loaded, shared_file("gsm8k/test.jsonl"))
    assert matched == 400 == attached.n_with_reference
    assert all(r.gold_answer == problems[r.question].gold_answer for r in attached.records)
    assert attached.records[0].gold_solution == problems[first.question].gold_solution
    assert "400 with a reference answer" in attached.summary()


def test_processbench_math_reads_every_row_and_112_are_math500_problems(shared_file) -> None:
    loaded = load_solutions(shared_file("processbench/math.json"), source="math500")
    assert (len(loaded.records), loaded.set_aside) == (1000, ())
    assert {r.first_error for r in loaded.records} >= {-1, 0, 1}
    attached, matched = attach_reference(loaded, shared_file("math500/test.jsonl"))
    assert matched == 112
    math500 = {p.problem_id for p in load_problems(shared_file("math500/test.jsonl")).records}
    assert sum(r.problem_id in math500 for r in attached.records) == 112
    assert sum(r.gold_answer is not None for r in attached.records) == 112


@pytest.mark.parametrize("fixture,split", [(GSM8K_20, "gsm8k"), (MATH_20, "math")])
def test_the_fixtures_are_the_first_ten_right_and_wrong_rows_of_the_published_split(shared_file, fixture: Path,
                                                                                   split: str) -> None:
    published = _published(shared_file(f"processbench/{split}.json"))
    right = [r for r in published if r["label"] == -1][:10]
    wrong = [r for r in published if r["label"] != -1][:10]
    assert _published(fixture) == sorted(right + wrong, key=published.index)


def test_the_gsm8k_test_fixture_holds_the_test_rows_of_the_twenty_problems(shared_file) -> None:
    test_rows = {json.loads(line)["question"].strip(): json.loads(line)
                 for line in shared_file("gsm8k/test.jsonl").read_text(encoding="utf-8").splitlines()}
    fixture = [json.loads(line) for line in GSM8K_TEST_20.read_text(encoding="utf-8").splitlines()]
    assert {r["question"].strip() for r in fixture} == {r["problem"].strip() for r in _published(GSM8K_20)}
    assert all(test_rows[r["question"].strip()] == r for r in fixture)


# --- the fixtures, in every format ---------------------------------------------------------------------------------


@pytest.mark.parametrize("fixture", [GSM8K_20, MATH_20])
def test_fixture_splits_read_with_ten_right_and_ten_wrong(fixture: Path) -> None:
    loaded = load_solutions(fixture)
    published = _published(fixture)
    assert detect_format(fixture) == loaded.format == "processbench"
    assert [r.solution_id for r in loaded.records] == [r["id"] for r in published]
    assert [r.steps for r in loaded.records] == [tuple(r["steps"]) for r in published]
    assert [r.first_error for r in loaded.records] == [r["label"] for r in published]
    assert [r.line for r in loaded.records] == list(range(1, 21))
    assert sum(r.first_error == -1 for r in loaded.records) == 10
    assert loaded.source == fixture.stem and loaded.records[0].problem_id == stable_id(fixture.stem,
                                                                                      published[0]["problem"].strip())
    assert "\n" not in loaded.summary() and "20 of 20 rows kept" in loaded.summary()


def test_attach_reference_matches_the_gsm8k_test_fixture_and_problem_ids_join() -> None:
    loaded = load_solutions(GSM8K_20, source="slices")  # the source load_problems gives the fixture file
    problems = {p.problem_id: p for p in load_problems(GSM8K_TEST_20).records}
    assert len(problems) == 19 and {r.problem_id for r in loaded.records} == set(problems)
    attached, matched = attach_reference(loaded, GSM8K_TEST_20)
    assert matched == 20 and all(r.gold_answer == problems[r.problem_id].gold_answer for r in attached.records)
    assert loaded.records[0].gold_answer is None  # the input is left as it was
    _, none = attach_reference(load_solutions(MATH_20), GSM8K_TEST_20)
    assert none == 0


def _same(a: LoadedSolutions, b: LoadedSolutions) -> None:
    fields = ("solution_id", "problem_id", "question", "steps", "generator", "first_error", "final_answer_correct")
    assert [[getattr(r, f) for f in fields] for r in a.records] == [[getattr(r, f) for f in fields] for r in b.records]


def test_processbench_as_jsonl_and_parquet_reads_like_the_published_array(tmp_path: Path) -> None:
    rows = _published(GSM8K_20)
    array = load_solutions(GSM8K_20)
    jsonl = load_solutions(write_jsonl(rows, tmp_path / "gsm8k.jsonl"))
    parquet_path = tmp_path / "gsm8k.parquet"
    pq.write_table(pa.Table.from_pylist(rows), parquet_path)
    parquet = load_solutions(parquet_path)
    assert detect_format(parquet_path) == detect_format(tmp_path / "gsm8k.jsonl") == "processbench"
    _same(array, jsonl)
    _same(array, parquet)
    assert [r.line for r in parquet.records] == list(range(1, 21))


def test_processbench_export_round_trips(tmp_path: Path) -> None:
    rows = _trl_rows(_published(GSM8K_20))
    path = write_processbench(rows, tmp_path / "pb.jsonl")
    loaded = load_solutions(path, source="gsm8k")
    assert [r.solution_id for r in loaded.records] == [r["id"] for r in read_processbench(path)]
    assert [r.first_error for r in loaded.records] == [r["label"] for r in _published(GSM8K_20)]
    assert [r.generator for r in loaded.records] == [None] * 20  # the export carries no generator
    published = [(r.problem_id, r.steps) for r in load_solutions(GSM8K_20).records]
    assert [(r.problem_id, r.steps) for r in loaded.records] == published


def test_trl_export_round_trips_with_per_step_labels(tmp_path: Path) -> None:
    rows = _trl_rows(_published(MATH_20))
    loaded = load_solutions(write_trl_stepwise(rows, tmp_path / "train.jsonl"))
    assert loaded.format == "trl" and len(loaded.records) == 20
    assert [r.solution_id for r in loaded.records] == [r["solution_id"] for r in rows]
    assert [list(r.step_labels) for r in loaded.records] == [r["labels"] for r in rows]
    assert [r.first_error for r in loaded.records] == [r["label"] for r in _published(MATH_20)]
    assert [list(r.steps) for r in loaded.records] == [r["completions"] for r in rows]


def test_math_shepherd_export_round_trips_tag_text_included(tmp_path: Path) -> None:
    kyiv = {"prompt": "Где киев?", "completions": ["ки\u2060ев", "Answer: Киев"], "solution_id": "kyiv",
            "labels": [True, False]}
    rows = [*_trl_rows(_published(GSM8K_20)), kyiv]
    path = write_math_shepherd(rows, tmp_path / "ms.jsonl")
    loaded = load_solutions(path)
    assert loaded.format == "math_shepherd"
    back = read_math_shepherd(path)  # the exporter's own reader
    assert [r.question for r in loaded.records] == [r["prompt"].strip() for r in back]
    assert [list(r.steps) for r in loaded.records] == [r["completions"] for r in back] == [r["completions"]
                                                                                          for r in rows]
    assert [list(r.step_labels) for r in loaded.records] == [r["labels"] for r in rows]
    assert loaded.records[-1].first_error == 1 and loaded.records[-1].solution_id == "kyiv"


def test_math_shepherd_dataset_rows_take_their_task_as_source(tmp_path: Path) -> None:
    text = "1+1 = Step 1: 1+1 = 2 ки\nStep 2: The answer is: 2 ки"
    path = _write(tmp_path / "shepherd.jsonl", json.dumps({"input": text, "label": text.replace("ки", "+"),
                                                           "task": "GSM8K"}))
    record = load_solutions(path).records[0]
    assert record.problem_id == stable_id("gsm8k", "1+1 =") and record.first_error == -1
    assert record.steps == ("1+1 = 2", "The answer is: 2")
    assert load_solutions(path, source="mine").records[0].problem_id == stable_id("mine", "1+1 =")
    assert load_solutions(path, task="math").records[0].problem_id == stable_id("math", "1+1 =")


def test_plain_rows_with_steps_or_a_solution_text(tmp_path: Path) -> None:
    path = write_jsonl([
        {"question": " 2+3*4 = ? ", "steps": ["3*4 = 12", "2+12 = 14"], "answer": "14", "model": "m1"},
        {"problem": "2+3*4 = ?", "solution": "3*4 = 12\n2+12 = 15\nAnswer: 15", "label": 1, "generator": "m2",
         "final_answer_correct": False},
        {"question": "Tom has 3 apples and buys 2. How many?", "solution": "3+2 = 5\n\nSo 5.",
         "answer": "He has 3+2 = <<3+2=5>>5.\n#### 5", "first_error": -1, "id": 7},
    ], tmp_path / "mine.jsonl")
    loaded = load_solutions(path)
    a, b, c = loaded.records
    assert loaded.format == "plain" and a.problem_id == b.problem_id == stable_id("mine", "2+3*4 = ?")
    assert (a.steps, a.gold_answer, a.generator, a.first_error) == (("3*4 = 12", "2+12 = 14"), "14", "m1", None)
    assert (b.steps, b.first_error, b.generator, b.final_answer_correct) == (
        segment("3*4 = 12\n2+12 = 15\nAnswer: 15").steps, 1, "m2", False)
    assert (c.steps, c.first_error, c.solution_id, c.gold_answer) == (("3+2 = 5", "So 5."), -1, "7", "5")
    assert c.gold_solution == "He has 3+2 = <<3+2=5>>5."
    assert a.solution_id == stable_id("sol", a.problem_id, *a.steps) != b.solution_id


def test_fmt_overrides_detection_and_must_be_known(tmp_path: Path) -> None:
    loaded = load_solutions(GSM8K_20, fmt="plain")  # a ProcessBench row is also a plain row
    _same(loaded, load_solutions(GSM8K_20))
    assert loaded.format == "plain"
    with pytest.raises(ValueError, match="not one of"):
        load_solutions(GSM8K_20, fmt="csv")
    with pytest.raises(ValueError, match=r"gsm8k\.json:1: missing \['prompt', 'completions', 'labels'\]"):
        load_solutions(GSM8K_20, fmt="trl")
    assert set(SOLUTION_FORMATS) == {"processbench", "trl", "math_shepherd", "plain"}


def test_limit_caps_the_rows_read(tmp_path: Path) -> None:
    rows = [{"question": f"q{i}", "steps": ["s"]} for i in range(5)]
    path = _write(tmp_path / "p.jsonl", *(json.dumps(r) for r in rows), "not json")
    loaded = load_solutions(path, limit=5)
    assert (loaded.n_read, len(loaded.records)) == (5, 5)
    with pytest.raises(ValueError, match=r"p\.jsonl:6: "):
        load_solutions(path)
    with pytest.raises(ValueError, match="limit 0"):
        load_solutions(path, limit=0)


# --- rows set aside ------------------------------------------------------------------------------------------------


def test_empty_steps_and_repeated_ids_are_set_aside_and_counted(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "pb.jsonl",
        json.dumps({"id": "a", "problem": "q1", "steps": ["s1", "s2"], "label": -1}),
        json.dumps({"id": "b", "problem": "q1", "steps": ["s1", " \t\n"], "label": 0}),
        json.dumps({"id": "c", "problem": "q2", "steps": ["", "s2"], "label": 1}),
        "",
        json.dumps({"id": "a", "problem": "q3", "steps": ["s1"], "label": 0}),
        json.dumps({"id": "d", "problem": "q3", "steps": ["s1"], "label": 0}),
    )
    loaded = load_solutions(path)
    assert [r.solution_id for r in loaded.records] == ["a", "d"] and [r.line for r in loaded.records] == [1, 6]
    assert (loaded.n_read, loaded.n_empty_steps, loaded.n_repeated_ids) == (5, 2, 1)
    assert [r.line for r in loaded.set_aside] == [2, 3, 5]
    assert "step 1 of 2 is empty" in str(loaded.set_aside[0]) and str(loaded.set_aside[0]).startswith(f"{path}:2: ")
    assert "repeats the id of line 1, which is kept" in loaded.set_aside[2].reason
    assert "3 set aside (2 with an empty step, 1 with a repeated id)" in loaded.summary()


def test_a_repeated_solution_without_id_is_set_aside(tmp_path: Path) -> None:
    row = json.dumps({"question": "q", "steps": ["a", "b"]})
    loaded = load_solutions(_write(tmp_path / "p.jsonl", row, row, json.dumps({"question": "q", "steps": ["a"]})))
    assert (len(loaded.records), loaded.n_repeated_ids, loaded.set_aside[0].line) == (2, 1, 2)


# --- malformed rows: one line naming file and line -----------------------------------------------------------------

PB_OK = json.dumps({"id": "x", "problem": "q", "steps": ["a", "b"], "label": -1})
MALFORMED = {
    "not_json": (PB_OK, '{"id": "y", "problem": '),
    "not_an_object": (PB_OK, "[1, 2]"),
    "missing_label": (PB_OK, json.dumps({"id": "y", "problem": "q", "steps": ["a"]})),
    "steps_a_string": (PB_OK, json.dumps({"id": "y", "problem": "q", "steps": "a\nb", "label": 0})),
    "steps_empty": (PB_OK, json.dumps({"id": "y", "problem": "q", "steps": [], "label": -1})),
    "step_not_text": (PB_OK, json.dumps({"id": "y", "problem": "q", "steps": ["a", 3], "label": -1})),
    "label_past_the_steps": (PB_OK, json.dumps({"id": "y", "problem": "q", "steps": ["a", "b"], "label": 2})),
    "label_below_minus_one": (PB_OK, json.dumps({"id": "y", "problem": "q", "steps": ["a"], "label": -2})),
    "label_bool": (PB_OK, json.dumps({"id": "y", "problem": "q", "steps": ["a"], "label": True})),
    "id_a_list": (PB_OK, json.dumps({"id": [1], "problem": "q", "steps": ["a"], "label": 0})),
    "problem_blank": (PB_OK, json.dumps({"id": "y", "problem": "  ", "steps": ["a"], "label": 0})),
    "generator_a_number": (PB_OK, json.dumps({"id": "y", "problem": "q", "steps": ["a"], "label": 0,
                                              "generator": 7})),
    "too_deep": (PB_OK, "[" * 100_000 + "]" * 100_000),
    "huge_number": (PB_OK, '{"id": "y", "problem": "q", "steps": ["a"], "label": ' + "9" * 5000 + "}"),
    "trl_soft_labels": (json.dumps({"prompt": "q", "completions": ["a"], "labels": [True]}),
                        json.dumps({"prompt": "q", "completions": ["a", "b"], "labels": [0.9, 0.2]})),
    "trl_label_count": (json.dumps({"prompt": "q", "completions": ["a"], "labels": [True]}),
                        json.dumps({"prompt": "q", "completions": ["a", "b"], "labels": [True]})),
    "shepherd_label_not_the_input": (
        json.dumps({"input": "q Step 1: a ки", "label": "q Step 1: a +"}),
        json.dumps({"input": "q Step 1: a ки\nStep 2: b ки", "label": "q Step 1: a +\nStep 2: b ?"})),
    "shepherd_untagged": (json.dumps({"input": "q Step 1: a ки", "label": "q Step 1: a +"}),
                          json.dumps({"input": "q Step 1: a", "label": "q Step 1: a +"})),
    "plain_blank_solution": (json.dumps({"question": "q", "steps": ["a"]}),
                             json.dumps({"question": "q", "solution": "\n  \nAnswer: 3"})),
    "plain_labels_disagree": (json.dumps({"question": "q", "steps": ["a"]}),
                              json.dumps({"question": "q", "steps": ["a", "b"], "label": 0, "first_error": 1})),
    "plain_answer_a_list": (json.dumps({"question": "q", "steps": ["a"]}),
                            json.dumps({"question": "q", "steps": ["a"], "answer": [3]})),
    "bad_task": (json.dumps({"question": "q", "steps": ["a"]}),
                 json.dumps({"question": "q", "steps": ["a"], "task": "../../etc"})),
}


@pytest.mark.parametrize("kind", sorted(MALFORMED))
def test_a_malformed_row_raises_one_line_naming_file_and_line(tmp_path: Path, kind: str) -> None:
    path = _write(tmp_path / "rows.jsonl", "", *MALFORMED[kind])  # a blank first line: the bad row is line 3
    with pytest.raises(ValueError) as info:
        load_solutions(path)
    message = str(info.value)
    assert message.startswith(f"{path}:3: ") and "\n" not in message and "; " in message, message
    assert len(message) < 600, message


@pytest.mark.parametrize("content,expected", [
    ("", r"x\.jsonl:1: the file holds no rows"),
    ('{"text": "hello"}\n', r"x\.jsonl:1: keys \['text'\] fit no solution format"),
    ('{"input": "a", "label": "b", "prompt": "q", "completions": [], "labels": []}\n',
     r"x\.jsonl:1: .*fit several formats \['trl', 'math_shepherd'\]; pass fmt="),
    ("\n\n17\n", r"x\.jsonl:3: a number, not an object"),
    (b'{"question": "\xff"}\n', r"x\.jsonl:1: not UTF-8"),
])
def test_files_with_no_readable_format_say_why(tmp_path: Path, content: str | bytes, expected: str) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    for read in (detect_format, load_solutions):
        with pytest.raises(ValueError, match=expected):
            read(path)


def test_a_broken_json_array_or_parquet_file_names_its_first_line(tmp_path: Path) -> None:
    bad_array = tmp_path / "a.json"
    bad_array.write_text('[\n{"id": "x", "problem": "q", "steps": ["a"], "label": 0},\n')
    with pytest.raises(ValueError, match=rf"^{tmp_path}/a\.json:1: the file is not a valid JSON array"):
        load_solutions(bad_array)
    bad_parquet = tmp_path / "b.parquet"
    bad_parquet.write_bytes(b"PAR1 not really")
    with pytest.raises(ValueError, match=rf"^{tmp_path}/b\.parquet:1: the file is not a readable Parquet file"):
        load_solutions(bad_parquet)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_solutions(tmp_path / "missing.jsonl")


# --- hostile text --------------------------------------------------------------------------------------------------

MB = 1_000_000
# CPU seconds of this process (time.process_time, which other jobs on the machine cannot inflate) per file of about a
# megabyte of hostile text; linear reading takes well under 0.1 s each, a quadratic cut would take minutes.
CPU_BOUND_S = 1.0
HOSTILE = {
    "plain_one_char_lines": {"question": "q", "solution": "a\n" * (MB // 2)},
    "plain_blank_lines": {"question": "q", "solution": "a\n \n" * (MB // 4)},
    "plain_answer_lines": {"question": "q", "solution": "x\nAnswer: 1\n" * (MB // 12)},
    "shepherd_tags": {"input": "q Step 1: " + " ки" * (MB // 3), "label": "q"},
    "shepherd_many_steps": {"input": "q" + "".join(f"{' Step 1: ' if k == 1 else chr(10) + f'Step {k}: '}a ки"
                                                   for k in range(1, 50_001)),
                            "label": "q" + "".join(f"{' Step 1: ' if k == 1 else chr(10) + f'Step {k}: '}a +"
                                                   for k in range(1, 50_001))},
    "shepherd_joiners": {"input": "q Step 1: " + "\u2060" * MB + " ки", "label": "q Step 1: " + "\u2060" * MB + " +"},
    "trl_many_steps": {"prompt": "q", "completions": ["a"] * (MB // 8), "labels": [True] * (MB // 8)},
    "processbench_long_step": {"id": "x", "problem": "q" * MB, "steps": ["s " * (MB // 2)], "label": 0},
}


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_hostile_text_reads_in_bounded_cpu_time(tmp_path: Path, kind: str) -> None:
    path = _write(tmp_path / "h.jsonl", json.dumps(HOSTILE[kind], ensure_ascii=False))
    start = time.process_time()
    try:
        load_solutions(path)
    except ValueError as exc:
        assert str(exc).startswith(f"{path}:1: ") and len(str(exc)) < 600
    spent = time.process_time() - start
    assert spent < CPU_BOUND_S, f"{kind}: {spent:.2f} CPU s"
