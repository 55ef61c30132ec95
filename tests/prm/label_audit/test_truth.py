"""Audit metrics on hand-computed tables."""

from __future__ import annotations

import pytest

from prm.label_audit import AuditRow, audit_labels, audit_markdown

# Three solutions: "w1" wrong from step 1, "w2" wrong from step 2, "c" correct; three steps each.
TRUTH_FE = {"w1": 1, "w2": 2, "c": -1}
SOLS = [{"solution_id": s, "first_error_truth": fe} for s, fe in TRUTH_FE.items()]
STEPS = [{"solution_id": s, "step_idx": k, "is_correct_truth": fe == -1 or k < fe}
         for s, fe in TRUTH_FE.items() for k in range(3)]


def _rows(pred: dict[str, list[bool | None]], first_error: dict[str, int] | None = None, cost: int = 8):
    return [{"solution_id": s, "step_idx": k, "hard_label": h, "first_error": (first_error or {}).get(s),
             "cost_rollouts": cost, "cost_tokens": 10 * cost} for s, hs in pred.items() for k, h in enumerate(hs)]


@pytest.mark.parametrize(
    "pred, first_error, expected",
    [
        # perfect labels
        ({"w1": [True, False, False], "w2": [True, True, False], "c": [True, True, True]}, None,
         dict(step_accuracy=1.0, step_f1=1.0, first_error_acc=1.0, correct_acc=1.0, processbench_f1=1.0)),
        # w2 missed, c rejected at its last step: 2 of 9 steps wrong, TP=2 FP=1 FN=1
        ({"w1": [True, False, False], "w2": [True, True, True], "c": [True, True, False]}, None,
         dict(step_accuracy=7 / 9, step_f1=2 / 3, first_error_acc=0.5, correct_acc=0.0, processbench_f1=0.0)),
        # stated first errors win over hard labels; a missing step is a miss (c never accepted)
        ({"w1": [True, None, None], "w2": [True, True, False], "c": [True, True]}, {"w1": 1},
         dict(step_accuracy=6 / 9, step_f1=0.5, first_error_acc=1.0, correct_acc=0.0, processbench_f1=0.0)),
        # accept everything: 0 first errors right, all correct accepted
        ({"w1": [True] * 3, "w2": [True] * 3, "c": [True] * 3}, None,
         dict(step_accuracy=6 / 9, step_f1=0.0, first_error_acc=0.0, correct_acc=1.0, processbench_f1=0.0)),
    ],
)
def test_audit_metrics(pred, first_error, expected):
    row = audit_labels("m", _rows(pred, first_error), STEPS, SOLS)
    for name, value in expected.items():
        assert getattr(row, name) == pytest.approx(value), name
    assert row.n_solutions == 3 and row.n_steps == 9


def test_processbench_f1_is_the_harmonic_mean():
    pred = {"w1": [True, False, False], "w2": [True, True, True], "c": [True, True, True]}
    row = audit_labels("m", _rows(pred), STEPS, SOLS)
    assert (row.first_error_acc, row.correct_acc) == (0.5, 1.0)
    assert row.processbench_f1 == pytest.approx(2 * 0.5 * 1.0 / 1.5)


def test_costs_divide_by_all_audited_steps():
    rows = _rows({"w1": [True, False, False]}, cost=8)  # only 3 of 9 steps labeled
    row = audit_labels("m", rows, STEPS, SOLS)
    assert row.rollouts_per_step == pytest.approx(24 / 9) and row.tokens_per_step == pytest.approx(240 / 9)
    assert row.coverage == pytest.approx(3 / 9)
    explicit = audit_labels("m", rows, STEPS, SOLS, cost_rollouts=90, cost_tokens=900)
    assert explicit.rollouts_per_step == pytest.approx(10.0)


def test_row_matches_label_audit_schema_and_table_prints():
    from warehouse.schemas import LABEL_AUDIT

    row = audit_labels("m", [], STEPS, SOLS)
    assert set(row.to_row()) == {f.name for f in LABEL_AUDIT} - {"run_id", "created_at", "source", "day"}
    table = audit_markdown([row, AuditRow("x", 0, 0, None, None, None, None, None, None, None)])
    assert table.count("\n") == 3 and "| m | 3 | 9 |" in table
