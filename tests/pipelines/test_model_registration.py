"""policy_model and prm_model register what they built in the warehouse's model registry, naming the table
versions the PRM's training set read; a re-materialization adds a row and never replaces or deletes one, and a
retrained PRM lands in a new folder, so every row's uri keeps its weights (issue 52 item 4, issue 49 item 5)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import dagster as dg
import pytest

from assets.generation import policy_model
from assets.prm import prm_model
from assets.resources import WarehouseResource
from prm.models import resolve_model, weights_digest
from prm.models.constants import ARITH_POLICY_NAME, MODEL_CACHE_ENV
from prm.training import TrainingSetConfig, build_training_set
from prm.training.artifacts import PRMArtifacts
from tests.prm.training.conftest import TINY_CONTEXT, fill_warehouse
from tests.tiny_models import TinyModels
from warehouse import Warehouse
from warehouse.model_registry import latest_model, lineage


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty model cache: arith-policy resolves to the shipped checkpoint, the PRM trains in here."""
    monkeypatch.setenv(MODEL_CACHE_ENV, str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_policy_model_adds_a_registration_each_time_it_materializes(cache: Path, tmp_path: Path):
    resource = WarehouseResource(data_root=str(tmp_path / "warehouse"))
    runs = [dg.materialize([policy_model], resources={"warehouse": resource}) for _ in range(2)]
    assert all(r.success for r in runs)
    wh = Warehouse(tmp_path / "warehouse")
    rows = wh.read("models").to_pylist()
    shipped = Path(resolve_model(ARITH_POLICY_NAME))
    assert sorted((r["kind"], r["version"], r["source"], r["uri"], r["run_id"]) for r in rows) == sorted(
        ("policy", weights_digest(shipped), "policy", str(shipped), r.run_id) for r in runs)
    entry = latest_model(wh.root, "policy")
    assert entry.training["config_hash"] and 0 <= entry.metrics["answer_accuracy"] <= 1
    assert wh.version("models") == 1  # one commit per materialization


def test_prm_model_registers_the_prm_with_the_versions_of_its_training_set(cache: Path, tmp_path: Path,
                                                                          tiny_models: TinyModels):
    wh = fill_warehouse(Warehouse(tmp_path / "warehouse"))
    ts = build_training_set(wh.root, TrainingSetConfig(method="mc"))
    ts.save(PRMArtifacts.default().training_set)
    base = tiny_models.lm(TINY_CONTEXT)
    result = dg.materialize([prm_model], resources={"warehouse": WarehouseResource(data_root=str(wh.root))},
                            run_config={"ops": {"prm_model": {"config": {
                                "base_model": str(base), "max_steps": 2, "batch_size": 4}}}})
    assert result.success
    entry = latest_model(wh.root, "prm")
    folder = PRMArtifacts.default().trained_model()
    assert (entry.version, entry.uri, entry.name) == (weights_digest(folder), str(folder), "prm-mc")
    assert entry.training_tables == {t: v for t, v in ts.warehouse_versions.items() if v is not None}
    assert entry.training["method"] == "mc" and entry.parent_version == weights_digest(base)
    assert [m.version for m in lineage(wh.root, entry.version)] == [entry.version]  # the base is not registered
    assert result.asset_materializations_for_node("prm_model")[0].metadata["version"].value == entry.version


def _folder_digest(folder: Path) -> str:
    """sha256 over every file under ``folder`` (relative path and bytes): byte-identical or not."""
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(f"{path.relative_to(folder).as_posix()}:{path.stat().st_size}:".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def test_retraining_the_prm_never_changes_the_weights_under_an_earlier_registry_row(cache: Path, tmp_path: Path,
                                                                                    tiny_models: TinyModels):
    wh = fill_warehouse(Warehouse(tmp_path / "warehouse"))
    build_training_set(wh.root, TrainingSetConfig(method="mc")).save(PRMArtifacts.default().training_set)
    resource = {"warehouse": WarehouseResource(data_root=str(wh.root))}
    base = str(tiny_models.lm(TINY_CONTEXT))
    digests: dict[str, str] = {}  # uri -> every file's digest right after the training that registered it
    for steps in (1, 2, 3):  # three recipe runs: each trains other weights
        result = dg.materialize([prm_model], resources=resource, run_config={"ops": {"prm_model": {"config": {
            "base_model": base, "max_steps": steps, "batch_size": 4}}}})
        assert result.success
        newest = latest_model(wh.root, "prm")
        assert PRMArtifacts.default().trained_model() == Path(newest.uri)  # the pointer names the newest row's
        digests[newest.uri] = _folder_digest(Path(newest.uri))
    rows = wh.read("models").to_pylist()
    assert len(rows) == 3 and len({r["version"] for r in rows}) == 3 and set(digests) == {r["uri"] for r in rows}
    for row in rows:
        folder = Path(row["uri"])
        assert weights_digest(folder) == row["version"]  # each row's folder still holds that version
        assert _folder_digest(folder) == digests[row["uri"]]  # byte for byte, card and tokenizer included
