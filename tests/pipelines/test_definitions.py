"""The code location loads, and every asset carries a group, kinds and the (day, source) partitions."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import dagster as dg

from assets.partitions import PARTITIONS, ROUNDS
from pipelines.definitions import defs


def test_definitions_validate() -> None:
    dg.Definitions.validate_loadable(defs)


def test_dagster_cli_validates_the_code_location(tmp_path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "dagster", "definitions", "validate", "-m", "pipelines.definitions"],
        capture_output=True, text=True, env={"DAGSTER_HOME": str(tmp_path), "PATH": ""}, timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Validation successful" in proc.stderr + proc.stdout


def test_dg_finds_the_project_from_pyproject(tmp_path) -> None:
    dg_cli = Path(sys.executable).with_name("dg")
    proc = subprocess.run([str(dg_cli), "check", "defs"], capture_output=True, text=True, timeout=900,
                          cwd=Path(__file__).resolve().parents[2], env={**os.environ, "DAGSTER_HOME": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "All definitions loaded successfully" in proc.stdout + proc.stderr


def test_assets_are_grouped_kinded_and_partitioned() -> None:
    graph = defs.resolve_asset_graph()
    for key in graph.get_all_asset_keys():
        node = graph.get(key)
        assert node.group_name in {"problems", "generation", "labeling", "verification", "prm", "rl", "search",
                                   "flywheel"}, key
        assert node.kinds, key
        if node.partitions_def is not None:  # flywheel rounds, or (day, source)
            assert node.partitions_def == (ROUNDS if node.group_name == "flywheel" else PARTITIONS), key


def test_every_asset_has_blocking_checks() -> None:
    graph = defs.resolve_asset_graph()
    checked = {key.asset_key for key in graph.asset_check_keys if graph.get_check_spec(key).blocking}
    assert set(graph.get_all_asset_keys()) - {dg.AssetKey("policy_model")} <= checked


def test_every_module_that_defines_an_asset_is_collected() -> None:
    import importlib
    import pkgutil

    import assets
    from pipelines.definitions import ASSET_MODULES

    defining = set()
    for info in pkgutil.iter_modules(assets.__path__):
        module = importlib.import_module(f"assets.{info.name}")
        if any(isinstance(v, dg.AssetsDefinition) and not isinstance(v, dg.AssetChecksDefinition)
               and v.op.compute_fn.decorated_fn.__module__ == module.__name__ for v in vars(module).values()):
            defining.add(module.__name__)
    assert defining and defining <= {m.__name__ for m in ASSET_MODULES}
    assert {key.to_user_string() for key in defs.resolve_asset_graph().get_all_asset_keys()} >= {
        "problems", "solutions", "mc_labels", "consensus_labels", "prm_model", "flywheel_policy"}
