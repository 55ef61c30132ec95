"""Data-quality checks: they pass on good data and fail, with counts, on data broken on purpose."""

from __future__ import annotations

import pyarrow as pa
import pytest
from deltalake import write_deltalake

from warehouse import Warehouse
from warehouse.checks import no_orphans, schema_conforms, values_in_range
from warehouse.schemas import delta_schema
from warehouse.validate import SchemaError

KW = {"source": "arith", "day": "2026-11-20"}


def _label(sid: str = "s1", step: int = 0, method: str = "mc", **over) -> dict:
    row = {"solution_id": sid, "problem_id": "p1", "step_idx": step, "method": method, "soft_label": 0.5,
           "hard_label": True, "status": "labeled", "n_rollouts": 4, "n_correct": 2, "labeler_version": "t"}
    return {**row, **over}


@pytest.fixture
def good(wh: Warehouse) -> Warehouse:
    wh.write("problems", [{"problem_id": "p1", "task": "arith_chain", "split": "test", "question": "1+1",
                           "gold_answer": "2"}], **KW)
    wh.write("solutions", [{"solution_id": "s1", "problem_id": "p1", "sample_idx": 0, "text": "1+1 = 2\nAnswer: 2",
                            "n_steps": 1, "final_answer": "2", "is_correct": True, "status": "ok", "model": "m"}],
             **KW)
    wh.write("steps", [{"solution_id": "s1", "problem_id": "p1", "step_idx": 0, "text": "1+1 = 2", "char_start": 0,
                        "char_end": 7}], **KW)
    wh.write("step_labels", [_label()], writer="mc", **KW)
    return wh


def test_checks_pass_on_good_data(good: Warehouse) -> None:
    orphans = no_orphans(good, "step_labels", "solutions", "solution_id")
    assert (orphans.passed, orphans.counts) == (True, {"orphans": 0})
    in_range = values_in_range(good, "step_labels", "soft_label", 0.0, 1.0)
    assert (in_range.passed, in_range.counts) == (True, {"out_of_range": 0})


def test_no_orphans_fails_on_a_label_whose_solution_is_missing(good: Warehouse) -> None:
    # The writer checks each table on its own, so nothing stops a label of a solution that was never written.
    good.write("step_labels", [_label("gone", method="sympy")], writer="sympy", **KW)
    outcome = no_orphans(good, "step_labels", "solutions", "solution_id")
    assert (outcome.passed, outcome.counts) == (False, {"orphans": 1})
    assert outcome.description == "1 step_labels rows have no solutions row"
    # ``where`` limits the check to the rows an asset owns: the mc labels have their solution.
    assert no_orphans(good, "step_labels", "solutions", "solution_id", where="c.method = 'mc'").passed
    assert not no_orphans(good, "step_labels", "solutions", "solution_id", where="c.method = 'sympy'").passed


def _write_around_validation(wh: Warehouse, **values: object) -> None:
    """A copy of the good label row with ``values`` set, appended straight to the Delta table with delta-rs (as
    a foreign writer such as Spark would): the warehouse's writer never sees it, Delta checks only types."""
    table = wh.read("step_labels").slice(0, 1)
    for name, value in {"step_idx": 1, **values}.items():  # step 1: a new key, so only the value is wrong
        i = table.schema.get_field_index(name)
        table = table.set_column(i, table.schema.field(i), pa.array([value], type=table.schema.field(i).type))
    table = table.append_column("writer", pa.array(["broken"]))
    write_deltalake(wh.uri("step_labels"), table.cast(delta_schema("step_labels")), mode="append")


@pytest.mark.parametrize(
    "values, column, low, high",
    [
        ({"soft_label": 1.5}, "soft_label", 0.0, 1.0),
        ({"soft_label": -0.5}, "soft_label", 0.0, 1.0),
        ({"n_rollouts": 4, "n_correct": 5}, "n_correct - n_rollouts", float("-inf"), 0.0),  # as the asset check
    ],
)
def test_values_in_range_fails_on_a_value_the_writer_would_refuse(good: Warehouse, values, column, low,
                                                                   high) -> None:
    with pytest.raises(SchemaError):
        good.write("step_labels", [_label(step=1, **values)], writer="mc", **KW)
    assert values_in_range(good, "step_labels", column, low, high).passed
    _write_around_validation(good, **values)
    assert schema_conforms(good, "step_labels").passed  # right types: only the range check can catch it
    outcome = values_in_range(good, "step_labels", column, low, high)
    assert (outcome.passed, outcome.counts) == (False, {"out_of_range": 1})
    assert outcome.description == f"1 step_labels.{column} values outside"
