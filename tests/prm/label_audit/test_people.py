"""A label method against people's first-error labels: ProcessBench's metric on its predicted first errors, step
precision and recall on the steps the label decides, cost per solution, an interval that resamples problems."""

from __future__ import annotations

import json

from prm.datagen import step_truth_from_first_error
from prm.label_audit import audit_against_people, people_rows
from prm.label_audit.people import PEOPLE_EXPERIMENT
from prm.metrics import official_score


def _case(truth: dict[str, int], n_steps: int = 3) -> tuple[list[dict], list[dict]]:
    sols = [{"solution_id": s, "problem_id": f"p{i // 2}", "first_error_truth": fe}
            for i, (s, fe) in enumerate(truth.items())]
    steps = [{"solution_id": s, "step_idx": k, "is_correct_truth": ok}
             for s, fe in truth.items() for k, ok in enumerate(step_truth_from_first_error(n_steps, fe))]
    return sols, steps


def _labels(predicted: dict[str, int | None], n_steps: int = 3, cost: int = 4) -> list[dict]:
    rows = []
    for s, fe in predicted.items():
        for k in range(n_steps):
            hard = None if fe is None else (k < fe if fe >= 0 else True)
            rows.append({"solution_id": s, "step_idx": k, "hard_label": hard, "first_error": None,
                         "cost_rollouts": cost, "cost_tokens": 10})
    return rows


def test_the_audit_is_the_official_metric_on_predicted_first_errors() -> None:
    truth = {"a": 1, "b": -1, "c": 0, "d": -1, "e": 2, "f": -1}
    predicted = {"a": 1, "b": -1, "c": 2, "d": 0, "e": None, "f": -1}
    sols, steps = _case(truth)
    audit = audit_against_people("m", _labels(predicted), steps, sols, split="pb")
    official = official_score(list(truth.values()), [predicted[s] for s in truth])
    assert (audit.error_acc, audit.correct_acc, audit.f1) == (official.error_acc, official.correct_acc, official.f1)
    assert audit.rows == 6 and audit.rollouts_per_solution == 12.0  # 3 steps x 4 rollouts
    low, high = audit.f1_ci
    assert low <= audit.f1 <= high
    # Steps people decide: up to and including each first error. "c" flags steps 2 only (not decided): no hit.
    assert audit.n_decided_steps == 2 + 3 + 1 + 3 + 3 + 3


def test_solutions_without_a_human_label_are_left_out_and_rows_name_the_truth() -> None:
    sols, steps = _case({"a": 0, "b": -1})
    sols.append({"solution_id": "z", "problem_id": "pz", "first_error_truth": None})
    audit = audit_against_people("sympy_ref", _labels({"a": 0, "b": -1, "z": 0}), steps, sols, split="pb",
                                 uses_reference=True, seconds=2.0)
    assert audit.rows == 2 and audit.f1 == 1.0 and audit.seconds_per_solution == 1.0
    rows = people_rows(audit)
    assert {r["experiment"] for r in rows} == {PEOPLE_EXPERIMENT}
    f1 = next(r for r in rows if r["metric"] == "processbench_f1")
    assert f1["value"] == 1.0 and json.loads(f1["detail_json"]) == {"truth": "people", "uses_reference": True,
                                                                   "ci": [1.0, 1.0]}
