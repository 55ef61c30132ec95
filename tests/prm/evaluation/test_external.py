"""An external step-labelled test set: ProcessBench-format files read back, checked, and a PRM evaluated on them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prm.evaluation.external import evaluate_processbench_file, external_rows, external_split, processbench_solutions
from prm.export.processbench import read_processbench, write_processbench
from prm.first_error import UNCHOSEN_THRESHOLD
from tests.tiny_models import TinyModels

CONTEXT = 256

STEPWISE = [  # TRL stepwise rows, as prm.export writes them: two problems, a right and a wrong solution each
    {"solution_id": f"{p}-{i}", "prompt": f"What is {p} plus 2?", "completions": [f"{p}+1 = {p + 1}", f"{p + 1}+1 = "
     f"{p + 2 + i}"], "labels": [True, not i]} for p in (3, 5) for i in (0, 1)]


def test_a_processbench_file_reads_back_as_held_out_solutions_with_step_truth(tmp_path: Path) -> None:
    path = write_processbench(STEPWISE, tmp_path / "mine.jsonl")
    rows = read_processbench(path)
    assert rows == [{"id": r["solution_id"], "problem": r["prompt"], "steps": r["completions"],
                     "label": -1 if all(r["labels"]) else 1} for r in STEPWISE]
    sols = processbench_solutions(rows)
    assert [s["first_error"] for s in sols] == [-1, 1, -1, 1]
    assert len({s["problem_id"] for s in sols}) == 2  # one problem per question text: the bootstrap unit


@pytest.mark.parametrize("line, match", [
    ('{"id": "a", "problem": "q", "steps": ["x"]}', r"bad.jsonl:2: missing \['label'\]"),
    ('{"id": "a", "problem": "q", "steps": "x", "label": -1}', "steps must be a non-empty list.*a string"),
    ('{"id": "a", "problem": "q", "steps": [], "label": -1}', "steps must be a non-empty list.*an empty list"),
    ('{"id": "a", "problem": "q", "steps": ["x", 3], "label": -1}', "a list holding a number"),
    ('{"id": "a", "problem": "", "steps": ["x"], "label": -1}', "problem is ''; give the question"),
    ('{"id": "a", "problem": "q", "steps": ["x"], "label": 1}', "label 1 is not -1 or a step index below 1"),
    ('{"id": "a", "problem": "q", "steps": ["x"], "label": true}', "label True is not -1"),
    ('{"id": null, "problem": "q", "steps": ["x"], "label": -1}', "id None is not a string or an integer"),
    ('{"id": "s", "problem": "q", "steps": ["x"], "label": -1}', "bad.jsonl:2: id 's' repeats line 1"),
    ('["a"]', "bad.jsonl:2: an array, not a JSON object"),
    ('{"id": "a", "problem": "q", ', "bad.jsonl:2: not JSON"),
])
def test_malformed_rows_name_the_line_and_what_to_fix(tmp_path: Path, line: str, match: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "s", "problem": "q", "steps": ["x"], "label": 0}\n' + line + "\n")
    with pytest.raises(ValueError, match=match):
        read_processbench(path)


def test_an_empty_or_missing_file_says_so(tmp_path: Path) -> None:
    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(ValueError, match="holds no rows"):
        read_processbench(tmp_path / "empty.jsonl")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        read_processbench(tmp_path / "absent.jsonl")


def test_external_rows_score_the_first_error_at_the_given_threshold() -> None:
    sols = [{**s, "scores": [0.9, 0.2 if s["first_error"] == 1 else 0.7]}
            for s in processbench_solutions([{"id": r["solution_id"], "problem": r["prompt"], "steps": r["completions"],
                                              "label": -1 if all(r["labels"]) else 1} for r in STEPWISE])]
    rows = {r["metric"]: r for r in external_rows("prm", "mc", sols, "processbench:mine")}
    assert rows["processbench_f1"]["value"] == 1.0 and rows["step_auc"]["value"] == 1.0
    assert json.loads(rows["processbench_f1"]["detail_json"])["threshold"] == UNCHOSEN_THRESHOLD
    strict = {r["metric"]: r for r in external_rows("prm", "mc", sols, "x", threshold=0.8, chosen_on="validation")}
    assert strict["correct_acc"]["value"] == 0.0  # 0.7 < 0.8 flags the right solutions' second step
    assert json.loads(strict["correct_acc"]["detail_json"])["chosen_on"] == "validation"


def test_a_prm_folder_is_evaluated_on_a_processbench_file(tmp_path: Path, tiny_models: TinyModels) -> None:
    path = write_processbench(STEPWISE, tmp_path / "mine.jsonl")
    rows = evaluate_processbench_file(tiny_models.prm(CONTEXT), path, "mc")
    assert {r["split"] for r in rows} == {external_split(path)} == {"processbench:mine"}
    f1 = next(r for r in rows if r["metric"] == "processbench_f1")
    assert f1["n"] == 4 and f1["value"] is not None and 0.0 <= f1["value"] <= 1.0
