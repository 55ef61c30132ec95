"""Value rules: a write refuses what the schema can name as wrong, before anything reaches the disk."""

from __future__ import annotations

import math

import pytest

from warehouse import Warehouse
from warehouse.schemas import (
    LABEL_STATUSES,
    SOLUTION_STATUSES,
    TABLES,
    VALUE_RULES,
    VERDICT_STATUSES,
)
from warehouse.validate import SchemaError

DAY = "2026-11-20"


def label(step: int = 0, **over) -> dict:
    row = {"solution_id": "s1", "problem_id": "p1", "step_idx": step, "method": "mc", "soft_label": 0.5,
           "hard_label": True, "status": "labeled", "n_rollouts": 4, "n_correct": 2, "labeler_version": "t"}
    return {**row, **over}


def step(i: int = 0, **over) -> dict:
    row = {"solution_id": "s1", "problem_id": "p1", "step_idx": i, "text": "1+1 = 2", "char_start": 0, "char_end": 7}
    return {**row, **over}


@pytest.mark.parametrize(
    ("table", "rows", "message"),
    [
        ("step_labels", [label(0), label(1, soft_label=math.nan)],
         r"step_labels\.soft_label: row 1 has nan, which is not a finite number"),
        ("step_labels", [label(soft_label=math.inf)], r"step_labels\.soft_label: row 0 has inf, which is not a finite"),
        ("step_labels", [label(soft_label=1.5)],
         r"step_labels\.soft_label: row 0 has 1\.5, which is above the maximum 1"),
        ("step_labels", [label(soft_label=-0.25)], r"step_labels\.soft_label: row 0 has -0\.25, which is below"),
        ("steps", [step(0), step(-1)], r"steps\.step_idx: row 1 has -1, which is below the minimum 0"),
        ("step_labels", [label(n_rollouts=4, n_correct=5)],
         r"step_labels\.n_correct: row 0 has 5, which exceeds n_rollouts of the same row \(4\)"),
        ("step_labels", [label(status="done")],
         r"step_labels\.status: row 0 has 'done', which is not one of labeled, by_convention, unverifiable, pseudo"),
        ("step_labels", [label(0), label(1), label(0)],
         r"step_labels\.solution_id, step_idx, method: rows 0 and 2 both have key .*'step_idx': 0"),
        ("steps", [step(0), step(1.5)], r"steps\.step_idx: row 1 has 1\.5, which is not int32 \(.*truncated"),
        ("steps", [step(0, char_start=5, char_end=3)], r"steps\.char_start: row 0 has 5, which exceeds char_end"),
        ("judgments", [{"judgment_id": "j", "solution_id": "s", "problem_id": "p", "model": "m", "n_votes": 3,
                        "n_abstain": 0, "agreement": 2.0}], r"judgments\.agreement: row 0 has 2\.0, which is above"),
    ],
    ids=["nan", "inf", "soft>1", "soft<0", "negative step", "n_correct>n_rollouts", "unknown status",
         "duplicate key", "float step index", "span backwards", "agreement>1"],
)
def test_invalid_values_are_refused_with_table_column_row_and_value(wh: Warehouse, table, rows, message) -> None:
    with pytest.raises(SchemaError, match=message):
        wh.write(table, rows, source="arith", day=DAY)
    assert wh.files(table) == []


def test_an_impossible_day_is_refused_before_the_disk(wh: Warehouse) -> None:
    with pytest.raises(ValueError, match=r"day '2026-13-45' is not a calendar date"):
        wh.write("steps", [step()], source="arith", day="2026-13-45")
    assert wh.files("steps") == []


def test_values_on_the_bounds_and_nulls_pass(wh: Warehouse) -> None:
    rows = [label(0, soft_label=0.0, n_rollouts=4, n_correct=4), label(1, soft_label=1.0, first_error=-1),
            label(2, soft_label=None, hard_label=None, status="unverifiable", n_rollouts=None, n_correct=None),
            label(3, step_idx=3.0)]  # an integral float is an integer, not a truncation
    assert wh.write("step_labels", rows, source="arith", day=DAY).rows == 4
    assert wh.read("step_labels").column("step_idx").to_pylist() == [0, 1, 2, 3]


def test_every_rule_names_columns_of_its_table() -> None:
    for table, rules in VALUE_RULES.items():
        names = set(TABLES[table].names)
        for column, rule in rules.items():
            assert column in names, f"{table}.{column}"
            assert rule.at_most is None or rule.at_most in names, f"{table}.{column} <= {rule.at_most}"


def test_status_vocabularies_match_the_code_that_writes_them() -> None:
    from prm.format.labels import STATUS_BY_CONVENTION, STATUS_LABELED, STATUS_PSEUDO, STATUS_UNVERIFIABLE
    from prm.generation.constants import STATUS_ERROR, STATUS_OK
    from verifiers.verdict import STATUSES as VERDICTS

    assert LABEL_STATUSES == (STATUS_LABELED, STATUS_BY_CONVENTION, STATUS_UNVERIFIABLE, STATUS_PSEUDO)
    assert VERDICT_STATUSES == VERDICTS
    assert set(SOLUTION_STATUSES) == {STATUS_OK, STATUS_ERROR}
