"""Dagster fixtures: a throwaway instance, resources pointing at a tmp warehouse, and one refresh run of the
tiny config shared by the tests that only read what it wrote."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import pytest

from assets.resources import WarehouseResource

REFRESH_DAY = "2026-11-20"  # the day of the shared tiny refresh run (source arith)


@pytest.fixture
def instance(tmp_path: Path):
    home = tmp_path / "dagster_home"
    home.mkdir()
    with dg.instance_for_test(temp_dir=str(home)) as inst:
        yield inst


@pytest.fixture
def resource(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> WarehouseResource:
    """The default resource, pointed at a tmp warehouse and inbox through the environment (as users do)."""
    (tmp_path / "inbox").mkdir()
    monkeypatch.setenv("PRM_DATA_ROOT", str(tmp_path / "warehouse"))
    monkeypatch.setenv("PRM_INBOX", str(tmp_path / "inbox"))
    return WarehouseResource()


@pytest.fixture
def project_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The environment a demo or run subprocess inherits: DAGSTER_HOME, warehouse and inbox under ``tmp_path``
    (``tmp_path / "warehouse"`` is the warehouse root); returns the DAGSTER_HOME, its dagster.yaml written."""
    from pipelines.instance import ensure_dagster_home

    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PRM_DATA_ROOT", str(tmp_path / "warehouse"))
    monkeypatch.setenv("PRM_INBOX", str(tmp_path / "inbox"))
    (tmp_path / "inbox").mkdir()
    return ensure_dagster_home()


def tiny_run_config(model: str, context: int) -> dict:
    """Run config of the refresh job sized for tests: 4 problems, 2 samples, short generations."""
    gen = {"max_tokens": 96}
    return {
        "ops": {
            "problems": {"config": {"n_ops": [2, 3], "per_level": 2}},
            "solutions": {"config": {"n_samples": 2, **gen}},
            "rollouts": {"config": {"n_rollouts": 2, **gen}},
            "mc_labels": {"config": {"n_rollouts": 3, **gen}},
            "omegaprm_labels": {"config": {"k": 2, "max_searches": 4, **gen}},
            "judgments": {"config": {"k": 2, "temperature": 0.7, "max_tokens": 24, "max_solutions": 3}},
        },
        "resources": {"generation": {"config": {"model": model, "kv_cache_gib": 0.5, "max_model_len": context}}},
    }


@dataclass(frozen=True)
class RefreshRun:
    """The refresh job's result on (REFRESH_DAY, arith) and the warehouse root it wrote."""

    result: dg.ExecuteInProcessResult
    root: Path


@pytest.fixture(scope="session")
def refresh_run(tmp_path_factory: pytest.TempPathFactory, tiny_policy_dir: Path, tiny_context: int) -> RefreshRun:
    """The whole refresh job on the tiny config, once per session (real engine, labelers and checks), into its own
    instance and warehouse. Tests read it; one that changes the data copies ``root`` into its own warehouse."""
    from assets.partitions import partition_key, register_sources
    from pipelines.definitions import defs

    tmp = tmp_path_factory.mktemp("refresh-run")
    for folder in ("inbox", "home"):
        (tmp / folder).mkdir()
    root = tmp / "warehouse"
    with dg.instance_for_test(temp_dir=str(tmp / "home")) as instance, pytest.MonkeyPatch.context() as env:
        env.setenv("PRM_DATA_ROOT", str(root))
        env.setenv("PRM_INBOX", str(tmp / "inbox"))
        register_sources(instance, ["arith"])
        result = defs.resolve_job_def("refresh").execute_in_process(
            partition_key=partition_key(REFRESH_DAY, "arith"), instance=instance,
            run_config=tiny_run_config(str(tiny_policy_dir), tiny_context),
            resources={"warehouse": WarehouseResource(data_root=str(root))}, raise_on_error=False)
    return RefreshRun(result, root)
