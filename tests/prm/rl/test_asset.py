"""The rl_run asset materialized in-process on the tiny models: rows in the warehouse, table and plot in metadata."""

from __future__ import annotations

import shutil
from pathlib import Path

import dagster as dg
import pytest

import assets.rl as rl_asset
from assets.resources import WarehouseResource
from pipelines.definitions import CHECKS
from prm.models.constants import MODEL_CACHE_ENV
from prm.tasks import ArithmeticSourceConfig, generate_arithmetic
from warehouse import Warehouse

TINY = {"policy": "", "arms": ["outcome", "prm_sum"], "steps": 2, "batch_size": 4, "num_generations": 2,
        "train_ops": [2], "anchor_ops": [1], "eval_ops": [2], "eval_problems": 2, "eval_samples": 1}


@pytest.fixture
def cache(tmp_path: Path, tiny_prm: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A model cache holding the tiny PRM where prm_model saves it."""
    shutil.copytree(tiny_prm, tmp_path / "prm" / "model")
    monkeypatch.setenv(MODEL_CACHE_ENV, str(tmp_path))  # where prm_model saves it and rl_run writes its runs
    return tmp_path


def _store_problems(root: Path, n_ops: tuple[int, ...] = (1, 2)) -> None:
    """A day of the arith source, as the problems asset stores it: what rl_run reads."""
    records = generate_arithmetic(ArithmeticSourceConfig(n_ops=n_ops, per_level=4), seed=0)
    Warehouse(root).write("problems", [r.to_row() for r in records], source="arith", day="2026-11-20",
                          run_id="problems", writer="problems")


def test_rl_run_writes_metrics_and_reports_the_table(cache: Path, tiny_lm: Path, tmp_path: Path):
    _store_problems(tmp_path / "warehouse")
    resource = WarehouseResource(data_root=str(tmp_path / "warehouse"))
    config = {**TINY, "policy": str(tiny_lm)}
    rl_checks = [c for c in CHECKS if any(k.asset_key == rl_asset.rl_run.key for k in c.check_keys)]
    result = dg.materialize([rl_asset.rl_run, *rl_checks], resources={"warehouse": resource},
                            run_config={"ops": {"rl_run": {"config": config}}})
    assert result.success
    checks = {e.check_name: e.passed for e in result.get_asset_check_evaluations()}
    assert checks["rl_metrics_schema_conforms"] and checks["rl_metrics_ids_unique"] and checks["rl_arms_complete"]
    assert "rl_improves_some_arm" in checks  # a warning either way: two steps of a random policy prove nothing
    meta = result.asset_materializations_for_node("rl_run")[0].metadata
    assert meta["comparison"].value.count("\n") == 1 + 2  # header, rule, one line per arm
    assert Path(meta["plot"].value).is_file()
    assert Path(meta["path"].value).parent == cache / "rl"
    rows = Warehouse(tmp_path / "warehouse").read("rl_metrics").to_pylist()
    assert len(rows) == meta["dagster/row_count"].value
    assert {r["arm"] for r in rows} == {"outcome", "prm_sum"} and {r["run_id"] for r in rows} == {result.run_id}
    assert meta["prm_sum/acc_after"].value == next(r["value"] for r in rows if (r["arm"], r["step"], r["metric"]) ==
                                                   ("prm_sum", 2, "eval/answer_accuracy"))


def test_rl_run_on_a_warehouse_without_its_difficulties_says_what_to_change(cache: Path, tiny_lm: Path,
                                                                             tmp_path: Path):
    _store_problems(tmp_path / "warehouse", n_ops=(1,))  # no 2-op problems: train_ops and eval_ops are [2]
    resource = WarehouseResource(data_root=str(tmp_path / "warehouse"))
    result = dg.materialize([rl_asset.rl_run], resources={"warehouse": resource}, raise_on_error=False,
                            run_config={"ops": {"rl_run": {"config": {**TINY, "policy": str(tiny_lm)}}}})
    assert not result.success
    failure = result.get_step_failure_events()[0].step_failure_data.error
    assert "hold none with [2] operations (they hold [1])" in failure.message


def test_rl_run_without_a_prm_says_what_to_materialize(tmp_path: Path, tiny_lm: Path, monkeypatch):
    monkeypatch.setenv(MODEL_CACHE_ENV, str(tmp_path))
    resource = WarehouseResource(data_root=str(tmp_path / "warehouse"))
    result = dg.materialize([rl_asset.rl_run], resources={"warehouse": resource}, raise_on_error=False,
                            run_config={"ops": {"rl_run": {"config": {**TINY, "policy": str(tiny_lm)}}}})
    assert not result.success
    failure = result.get_step_failure_events()[0].step_failure_data.error
    assert "materialize prm_model first" in failure.message


def _rows(arm: str, evals: list[int], curve: list[int]) -> list[dict]:
    return ([{"arm": arm, "step": s, "metric": "eval/answer_accuracy", "value": 0.5} for s in evals]
            + [{"arm": arm, "step": s, "metric": "train/reward", "value": 0.1} for s in curve])


@pytest.mark.parametrize("rows,passed", [
    (_rows("a", [0, 3], [1, 2, 3]) + _rows("b", [0, 3], [1, 2, 3]), True),
    (_rows("a", [0, 3], [1, 2, 3]) + _rows("b", [0, 2], [1, 2]), False),  # b got a smaller budget
    (_rows("a", [0, 3], [1, 3]), False),  # a step's reward is missing
    (_rows("a", [0], []), False),  # no after
    ([], False),  # no run at all
])
def test_arms_complete_check(rows, passed, tmp_path: Path):
    resource = WarehouseResource(data_root=str(tmp_path / "warehouse"))
    if rows:
        resource.get().write("rl_metrics", rows, source="arith", day="2026-11-22", run_id="r1")
    assert rl_asset.rl_arms_complete(warehouse=resource).passed is passed
