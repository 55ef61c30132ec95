"""The prm_processbench asset: every registered PRM version without figures is scored on ProcessBench rows once,
its registry row then carries them (``SELECT ... FROM models``), a version whose folder changed is not scored."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import dagster as dg

from assets.processbench import prm_processbench, processbench_figures_defined
from prm.evaluation import SLICES
from prm.models import weights_digest
from prm.training import SHIPPED_PRM_DIR
from warehouse import ModelEntry, connect, model_versions, register_models


def _register(wh, folder: Path, name: str) -> ModelEntry:
    entry = ModelEntry(name=name, version=weights_digest(folder), kind="prm", uri=str(folder))
    register_models(wh, [entry], source="arith", day="2026-11-27", run_id=f"run-{name}", writer="prm_model")
    return entry


def _materialize(instance, resource) -> dg.ExecuteInProcessResult:
    config = {"ops": {"prm_processbench": {"config": {"data": str(SLICES)}}}}
    # With its blocking check, as the prm job runs it (the check reads the run's own rows).
    return dg.materialize([prm_processbench, processbench_figures_defined], instance=instance,
                          resources={"warehouse": resource}, run_config=config)


def test_each_registered_prm_gets_processbench_figures_once(instance, resource, tmp_path: Path) -> None:
    wh = resource.get()
    folder = shutil.copytree(SHIPPED_PRM_DIR, tmp_path / "prm")
    entry = _register(wh, folder, "arith-prm")
    other = shutil.copytree(SHIPPED_PRM_DIR, tmp_path / "gone")
    config = json.loads((other / "config.json").read_text())
    (other / "config.json").write_text(json.dumps({**config, "note": "another version"}))
    gone = _register(wh, other, "gone-prm")
    shutil.rmtree(gone.uri)
    result = _materialize(instance, resource)
    assert result.success
    [check] = result.get_asset_check_evaluations()
    assert check.passed and check.metadata["figures"].value == 2  # one version, two splits, both defined
    [scored] = [e for e in model_versions(wh.root, "prm") if e.version == entry.version]
    assert 0.0 <= scored.metrics["processbench/gsm8k/f1"] <= 1.0 and scored.metrics["processbench/math/rows"] == 20
    sql = connect(wh.root).execute(
        "SELECT json_extract(metrics_json, '$.\"processbench/gsm8k/f1\"')::DOUBLE FROM models "
        "WHERE source = 'processbench'").fetchall()
    assert sql == [(scored.metrics["processbench/gsm8k/f1"],)]
    rules = {(s, json.loads(d)["threshold_from"]) for s, d in connect(wh.root).execute(
        "SELECT split, detail_json FROM prm_evaluations WHERE experiment = 'processbench' "
        "AND metric LIKE 'processbench_f1%'").fetchall()}
    assert rules == {("processbench:gsm8k", "fixed"), ("processbench:gsm8k", "math"),
                     ("processbench:math", "fixed"), ("processbench:math", "gsm8k")}
    meta = result.asset_materializations_for_node("prm_processbench")[0].metadata
    assert meta["scored_versions"].value == 1 and "gone-prm" in meta["not_scorable"].value
    # A second run finds nothing new to score.
    again = _materialize(instance, resource)
    assert again.asset_materializations_for_node("prm_processbench")[0].metadata["scored_versions"].value == 0
