"""Z3 step checks on ``premises -> conclusion`` lines."""

from __future__ import annotations

import pytest

from verifiers import check_logic_step


@pytest.mark.parametrize(
    "step,status",
    [
        ("A is true, if A then B -> B is true", "correct"),
        ("A is true, B is false, if A and not B then C -> C is true", "correct"),
        ("A is false, if A or B then C -> C is true", "incorrect"),  # B unknown
        ("B is true, if A then B -> A is true", "incorrect"),  # affirming the consequent
        ("A is true, if A then not C -> C is false", "correct"),
        ("A is true, if A then not C -> C is true", "incorrect"),
        ("A is true, A is false -> Z is true", "correct"),  # inconsistent premises entail anything
        ("-> A or not A", "correct"),
        ("A is true, if A then B", "unverifiable"),
        ("A is true -> B is maybe", "unverifiable"),
        ("A is true -> -> B", "unverifiable"),
        ("", "unverifiable"),
    ],
)
def test_logic_table(step: str, status: str) -> None:
    assert check_logic_step(step).status == status


def test_incorrect_step_names_a_counterexample() -> None:
    verdict = check_logic_step("B is true, if A then B -> A is true")
    assert "A=False" in verdict.detail and verdict.equations == ("B is true, if A then B -> A is true",)
