"""The ``sympy_ref`` labeler: reads steps, solutions and problems; labels from the reference where the answer is graded,
the plain arithmetic check where it is not."""

from __future__ import annotations

import json

from prm.labeling import get_labeler
from prm.labeling.formal import verify_steps
from prm.labeling.reference_check import ReferenceConfig, ReferenceLabeler
from prm.labeling.types import LabelRun

QUESTION = ("Janet's ducks lay 16 eggs per day. She eats three for breakfast and bakes muffins with four. She sells "
            "the remainder for $2 per egg. How much does she make every day?")
PROBLEM = {"problem_id": "p", "task": "gsm8k", "question": QUESTION, "gold_answer": "18",
           "gold_solution": "Janet sells 16 - 3 - 4 = <<16-3-4=9>>9 duck eggs a day.\nShe makes 9 * 2 = $<<9*2=18>>18."}
RIGHT = ("She has 16 - 3 - 4 = 9 eggs left.", "She makes 9 * 2 = $18.", "The answer is 18.")
WRONG = ("She has 16 - 3 = 13 eggs left.", "She makes 13 * 2 = $26.", "The answer is 26.")


def _steps(sid: str, texts: tuple[str, ...], pid: str = "p") -> list[dict]:
    return [{"solution_id": sid, "problem_id": pid, "step_idx": k, "text": t} for k, t in enumerate(texts)]


def _by(run: LabelRun, sid: str) -> list[dict]:
    return sorted((r for r in run.rows() if r["solution_id"] == sid), key=lambda r: r["step_idx"])


def test_a_graded_answer_decides_with_the_reference() -> None:
    solutions = [{"solution_id": "r", "problem_id": "p", "final_answer": "18", "is_correct": True},
                 {"solution_id": "w", "problem_id": "p", "final_answer": "26", "is_correct": False}]
    rows = {"steps": _steps("r", RIGHT) + _steps("w", WRONG), "solutions": solutions, "problems": [PROBLEM]}
    run = get_labeler("sympy_ref").label(rows)
    assert [r["hard_label"] for r in _by(run, "r")] == [True, True, True]
    assert [(r["hard_label"], r["status"]) for r in _by(run, "w")] == [(False, "labeled"), (False, "by_convention"),
                                                                       (False, "by_convention")]
    assert {r["first_error"] for r in _by(run, "w")} == {0} and {r["method"] for r in run.rows()} == {"sympy_ref"}
    assert run.extra["counts"] == {"right_answer": 1, "unknown_value": 1}
    wrong = next(v for v in run.extra["verdicts"] if v["solution_id"] == "w")
    assert wrong["detail"] == "writes 13: not the question's or the reference's" and wrong["reference"] == "reference"
    assert json.loads(run.rows()[0]["params_json"]) == {"method": "sympy_ref", "timeout_s": 2.0, "use_reference": True}


def test_an_ungraded_answer_is_graded_from_the_last_number_of_the_last_step() -> None:
    texts = ("She has 16 - 3 - 4 = 9 eggs left.", "So she makes 9 * 2 = $18 a day.")
    rows = {"steps": _steps("s", texts), "problems": [PROBLEM],
            "solutions": [{"solution_id": "s", "problem_id": "p", "final_answer": None, "is_correct": None}]}
    run = ReferenceLabeler().label(rows)
    assert [r["hard_label"] for r in run.rows()] == [True, True]
    assert run.extra["verdicts"][0]["answer"] == "18" and run.extra["verdicts"][0]["answer_correct"] is True


def test_without_a_gold_answer_it_labels_as_the_sympy_labeler() -> None:
    texts = ("Let us count.", "2 + 3 = 5", "5 * 2 = 11", "11 - 1 = 10")
    problem = {**PROBLEM, "gold_answer": None, "gold_solution": None}
    run = ReferenceLabeler().label({"steps": _steps("s", texts), "solutions": [], "problems": [problem]})
    sympy = verify_steps(_steps("s", texts), {"p": "gsm8k"}).labels
    keys = ("step_idx", "hard_label", "status", "first_error")
    assert [{k: r[k] for k in keys} for r in run.rows()] == [{k: r[k] for k in keys} for r in sympy]
    assert run.extra["counts"] == {"arithmetic_only": 1}


def test_gold_only_config_ignores_the_reference_solution() -> None:
    texts = ("She has 16 - 3 - 4 = 9 eggs left.", "She makes 9 * 3 = $27.")
    rows = {"steps": _steps("s", texts), "problems": [PROBLEM],
            "solutions": [{"solution_id": "s", "problem_id": "p", "final_answer": "27", "is_correct": False}]}
    with_ref = ReferenceLabeler().label(rows)
    gold_only = ReferenceLabeler(ReferenceConfig(use_reference=False)).label(rows)
    assert {r["first_error"] for r in with_ref.rows()} == {1}  # 9 is a reference value
    assert {r["first_error"] for r in gold_only.rows()} == {0}  # without the reference, 9 is unknown


def test_tasks_without_sympy_and_empty_partitions_give_no_rows() -> None:
    logic = {"problem_id": "q", "task": "logic", "question": "p -> q", "gold_answer": "q"}
    run = ReferenceLabeler().label({"steps": _steps("s", ("p", "q"), pid="q"), "solutions": [], "problems": [logic]})
    assert run.rows() == [] and run.solution_ids == ()
    assert ReferenceLabeler().label({"steps": [], "solutions": [], "problems": []}).rows() == []
