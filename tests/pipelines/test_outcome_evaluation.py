"""The PRM half of the graph on GSM8K-shaped data (gold answers, no step truth): the training set, the PRM and its
evaluation materialize, the evaluation says "no step truth" where a step metric would be, reports best-of-N and the
votes against the gold answer, and reads an external ProcessBench-format file named in its config."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from assets.prm import prm_evaluation, prm_model, prm_training_set
from assets.resources import WarehouseResource
from prm.export.processbench import write_processbench
from prm.first_error import NO_STEP_TRUTH
from tests.prm.evaluation.gsm8k_like import N_SAMPLES, fill_gsm8k_like
from tests.tiny_models import TinyModels
from warehouse import connect

CONTEXT = 256


def _run(instance, resource: WarehouseResource, base: Path, processbench: str | None) -> dg.ExecuteInProcessResult:
    config = {"ops": {
        "prm_training_set": {"config": {"method": "mc"}},
        "prm_model": {"config": {"base_model": str(base), "max_steps": 2, "batch_size": 8}},
        "prm_evaluation": {"config": {"processbench_file": processbench}},
    }}
    return dg.materialize([prm_training_set, prm_model, prm_evaluation], instance=instance,
                          resources={"warehouse": resource}, run_config=config, raise_on_error=False)


def test_prm_evaluation_falls_back_to_outcomes_and_reads_an_external_set(
        instance, resource: WarehouseResource, tiny_models: TinyModels, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRM_MODEL_CACHE", str(tmp_path / "models"))
    fill_gsm8k_like(resource.get())
    pb = write_processbench([{"solution_id": f"x{i}", "prompt": "What is 1 plus 2?", "completions": ["1+2 = 3"],
                              "labels": [i == 0]} for i in range(2)], tmp_path / "external.jsonl")
    result = _run(instance, resource, tiny_models.lm(CONTEXT), str(pb))
    assert result.success
    meta = result.asset_materializations_for_node("prm_evaluation")[0].metadata
    assert NO_STEP_TRUTH in meta["evaluation"].value and NO_STEP_TRUTH in meta["step_sensitivity"].value
    rows = connect(resource.get().root).execute("SELECT model, split, metric, value, json_extract_string(detail_json, "
                                                "'$.missing') FROM prm_evaluations").fetchall()
    prm_rows = [r for r in rows if r[2] == f"bon_acc@{N_SAMPLES}" and r[1] == "test"]
    assert {r[0] for r in prm_rows} >= {"majority_vote", "oracle", "random_pick"}
    assert all(r[3] is not None for r in prm_rows)  # best-of-N, the references: graded against the gold answer
    f1 = [r for r in rows if r[1] == "test" and r[2] == "processbench_f1"]
    assert f1 and all(r[3] is None and r[4] == NO_STEP_TRUTH for r in f1)
    external = [r for r in rows if r[1] == "processbench:external"]
    assert {r[2] for r in external} >= {"processbench_f1", "step_auc"}
    assert all(r[3] is not None for r in external if r[2] == "processbench_f1")  # the file has step truth


def test_a_malformed_external_file_fails_the_evaluation_with_the_line(
        instance, resource: WarehouseResource, tiny_models: TinyModels, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRM_MODEL_CACHE", str(tmp_path / "models"))
    fill_gsm8k_like(resource.get())
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "problem": "q", "steps": ["x"], "label": 4}\n')
    result = _run(instance, resource, tiny_models.lm(CONTEXT), str(bad))
    assert not result.success
    failure = next(e for e in result.all_events if e.event_type_value == "STEP_FAILURE")
    assert "bad.jsonl:1: label 4" in str(failure.event_specific_data.error)


def test_an_evaluation_that_cannot_measure_best_of_n_says_so() -> None:
    from prm.reports import unmeasurable_note as _unmeasurable_note

    def rows(oracle: float, uniform: float) -> list[dict]:
        return [{"model": "oracle", "metric": "bon_acc@4", "value": oracle},
                {"model": "random_pick", "metric": "bon_acc@4", "value": uniform}]

    assert _unmeasurable_note(rows(0.0, 0.0)).startswith("**No test problem has a correct solution**")
    assert _unmeasurable_note(rows(1.0, 1.0)).startswith("**Every test solution is correct**")
    assert _unmeasurable_note(rows(1.0, 0.6)) == ""
