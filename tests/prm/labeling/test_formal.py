"""Formal step labels: raw verdicts are kept, labels follow the first-error convention."""

from __future__ import annotations

import pytest

from prm.labeling.formal import verify_steps

TASK_OF = {"p": "arith_chain"}


def _steps(*texts: str, sid: str = "s") -> list[dict]:
    return [{"solution_id": sid, "problem_id": "p", "step_idx": k, "text": t} for k, t in enumerate(texts)]


def _by_step(rows: list[dict], sid: str = "s") -> list[dict]:
    return sorted((r for r in rows if r["solution_id"] == sid), key=lambda r: r["step_idx"])


@pytest.mark.parametrize(
    "texts, raw, hard, status, first_error",
    [
        # Step 1 is wrong; step 2 is locally right but follows it, so it is wrong by convention.
        (("2+3 = 5", "5*2 = 11", "11-1 = 10", "10*2 = 21"), ["correct", "incorrect", "correct", "incorrect"],
         [True, False, False, False], ["labeled", "labeled", "by_convention", "by_convention"], 1),
        # An unverifiable step after the error is still wrong by convention; the first error is known.
        (("2+3 = 5", "5*2 = 11", "Let us count the apples."), ["correct", "incorrect", "unverifiable"],
         [True, False, False], ["labeled", "labeled", "by_convention"], 1),
        # An unverifiable step before the error: the first error could be there, so it is unknown.
        (("Let us count the apples.", "2+2 = 5", "5-1 = 4"), ["unverifiable", "incorrect", "correct"],
         [None, False, False], ["unverifiable", "labeled", "by_convention"], None),
        (("2+3 = 5", "5*2 = 10"), ["correct", "correct"], [True, True], ["labeled", "labeled"], -1),
    ],
    ids=["locally_right_after_error", "unverifiable_after_error", "unverifiable_before_error", "all_correct"],
)
def test_labels_after_the_first_error_follow_the_convention(texts, raw, hard, status, first_error) -> None:
    run = verify_steps(_steps(*texts), TASK_OF)
    assert [v["status"] for v in _by_step(run.verifications)] == raw  # every raw verdict is kept
    labels = _by_step(run.labels)
    assert [r["hard_label"] for r in labels] == hard
    assert [r["status"] for r in labels] == status
    assert [r["soft_label"] for r in labels] == [None if h is None else float(h) for h in hard]
    assert {r["first_error"] for r in labels} == {first_error}
    assert {r["method"] for r in labels} == {"sympy"}


def test_solutions_are_labeled_independently_and_unknown_tasks_are_skipped() -> None:
    steps = [*_steps("2+3 = 6", "6+1 = 7", sid="a"), *_steps("2+3 = 5", "5+1 = 6", sid="b"),
             {"solution_id": "c", "problem_id": "q", "step_idx": 0, "text": "1+1 = 3"}]
    run = verify_steps(steps[::-1], {**TASK_OF, "q": "no_verifier"})  # order of the input rows does not matter
    assert [r["hard_label"] for r in _by_step(run.labels, "a")] == [False, False]
    assert [r["hard_label"] for r in _by_step(run.labels, "b")] == [True, True]
    assert {r["solution_id"] for r in run.labels} == {"a", "b"}
    assert run.counts == {"correct": 3, "incorrect": 1}
