"""The code location loads, and every asset carries a group, kinds and the (day, source) partitions."""

from __future__ import annotations

import subprocess
import sys

import dagster as dg

from pipelines.definitions import defs
from pipelines.partitions import PARTITIONS


def test_definitions_validate() -> None:
    dg.Definitions.validate_loadable(defs)


def test_dagster_cli_validates_the_code_location(tmp_path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "dagster", "definitions", "validate", "-m", "pipelines.definitions"],
        capture_output=True, text=True, env={"DAGSTER_HOME": str(tmp_path), "PATH": ""}, timeout=180,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Validation successful" in proc.stderr + proc.stdout


def test_assets_are_grouped_kinded_and_partitioned() -> None:
    graph = defs.resolve_asset_graph()
    for key in graph.get_all_asset_keys():
        node = graph.get(key)
        assert node.group_name in {"problems", "generation", "labeling", "verification", "training", "rl"}, key
        assert node.kinds, key
        if node.partitions_def is not None:
            assert node.partitions_def == PARTITIONS, key


def test_every_asset_has_blocking_checks() -> None:
    graph = defs.resolve_asset_graph()
    checked = {key.asset_key for key in graph.asset_check_keys if graph.get_check_spec(key).blocking}
    assert set(graph.get_all_asset_keys()) - {dg.AssetKey("policy_model")} <= checked
