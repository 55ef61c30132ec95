"""The flywheel job on real components (vLLM engine, Delta tables, PRM training, GRPO), sized to seconds per round:
a round killed during RL resumes without duplicate rows or a half-registered policy, two rounds finish (each
round's held-out samples hold both outcomes), the next round samples and rolls out from the RL checkpoint, lineage
reads back through SQL, a blocking check stops a bad round and marks its PRM rejected (under
``on_rejected_prm="keep_last"`` it warns and RL runs on the last accepted PRM), and re-materializing round
0's PRM afterwards leaves every registered model's weights and parents in place."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import pytest

from prm.flywheel import FlywheelConfig, round_source
from prm.flywheel.lineage import policy_name, prm_name, round_prm, usable_prm
from warehouse import Warehouse, connect
from warehouse import checks as wc
from warehouse.model_registry import latest_model

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

PROJECT_ROOT = Path(__file__).resolve().parents[2]
TINY = {"per_level": 2, "n_samples": 2, "label_rollouts": 2, "prm_steps": 5, "rl_steps": 2, "rl_batch_size": 8,
        "num_generations": 4, "eval_problems": 1, "eval_samples": 1, "prm_tolerance": 1.0}


def tiny_config(models: Path, **overrides) -> dict:
    return {"resources": {"flywheel": {"config": {**TINY, "models_dir": str(models), **overrides}},
                          "generation": {"config": {"kv_cache_gib": 0.5}}}}


def _policy_started(instance: dg.DagsterInstance) -> str | None:
    """The flywheel run that has started its RL step, if one has."""
    for run in instance.get_runs(dg.RunsFilter(job_name="flywheel")):
        if any(e.step_key == "flywheel_policy"
               for e in instance.all_logs(run.run_id, of_type=dg.DagsterEventType.STEP_START)):
            return run.run_id
    return None


def _entries(root: Path) -> list[tuple]:
    return connect(root).execute("SELECT name, kind, round, version, parent_version FROM models "
                                 "ORDER BY created_at").fetchall()


def _dangling(root: Path) -> list[str]:
    """Registered models whose weights are gone, or whose parent or reward PRM is not registered."""
    rows = connect(root).execute("SELECT name, version, parent_version, uri, training_json FROM models").fetchall()
    registered = {version for _, version, *_ in rows}
    found = []
    for name, version, parent, uri, training in rows:
        reward = json.loads(training or "{}").get("reward_prm")
        problems = {"weights gone": not Path(uri).is_dir(),
                    f"parent {parent} unregistered": parent not in registered | {None},
                    f"reward_prm {reward} unregistered": reward not in registered | {None}}
        found += [f"{name} {version}: {what}" for what, bad in problems.items() if bad]
    return found


def test_rounds_resume_after_a_kill_register_lineage_and_a_blocking_check_stops_a_bad_round(
        tmp_path: Path, project_home: Path) -> None:
    root, models = tmp_path / "warehouse", tmp_path / "models"
    command = [sys.executable, "-m", "pipelines.flywheel", "--config", json.dumps(tiny_config(models))]

    # Round 0, killed (SIGKILL) once its RL step runs: the PRM is registered, the policy must not be.
    with (tmp_path / "first.log").open("w") as log:
        first = subprocess.Popen([*command, "--rounds", "1"], cwd=PROJECT_ROOT, env=os.environ, stdout=log,
                                 stderr=subprocess.STDOUT)
        with dg.DagsterInstance.from_config(str(project_home)) as instance:
            deadline = time.monotonic() + 900
            while (dead := _policy_started(instance)) is None:
                assert first.poll() is None, (tmp_path / "first.log").read_text()[-3000:]
                assert time.monotonic() < deadline, "the RL step never started"
                time.sleep(0.2)
            first.kill()
            first.wait()
    assert [(name, kind) for name, kind, *_ in _entries(root)] == [("arith-policy", "policy"),
                                                                  (prm_name(0), "prm")]
    assert len(list((models / "round-0").glob("prm-*"))) == 1 and not list((models / "round-0").glob("rl-*"))
    rows_before = {t: Warehouse(root).read(t).num_rows for t in ("problems", "solutions", "steps", "step_labels")}

    # Resume round 0 and run round 1 (round 2 would repeat round 1: it samples the last round's RL checkpoint).
    again = subprocess.run([*command, "--rounds", "2"], cwd=PROJECT_ROOT, env=os.environ, capture_output=True,
                           text=True, timeout=1500)
    assert again.returncode == 0, (again.stdout + again.stderr)[-3000:]
    with dg.DagsterInstance.from_config(str(project_home)) as instance:
        assert instance.get_run_by_id(dead).status == dg.DagsterRunStatus.FAILURE
        (samples,) = instance.fetch_materializations(dg.AssetRecordsFilter(
            asset_key=dg.AssetKey("flywheel_samples"), asset_partitions=["0"]), limit=1).records
        assert samples.run_id != dead and samples.asset_materialization.metadata["reused"].value is True
        (policy,) = instance.fetch_materializations(dg.AssetRecordsFilter(
            asset_key=dg.AssetKey("flywheel_policy"), asset_partitions=["1"]), limit=1).records
        meta = policy.asset_materialization.metadata
        assert Path(meta["rounds_plot"].value).is_file() and meta["rounds"].value.count("\n") == 3  # 2 rounds
    wh = Warehouse(root)
    for table in wh.tables():
        assert wc.ids_unique(wh, table).passed, table
    con = connect(root)
    by_source = dict(con.execute("SELECT source, count(*) FROM solutions GROUP BY 1").fetchall())
    assert by_source == {round_source(k): rows_before["solutions"] for k in range(2)}
    entries = {(name, kind): (k, version, parent) for name, kind, k, version, parent in _entries(root)}
    assert sorted(entries) == sorted([("arith-policy", "policy"), *[(f(k), kind) for k in range(2) for f, kind in (
        (prm_name, "prm"), (policy_name, "policy"))]])
    start = entries[("arith-policy", "policy")][1]
    policy0, prm0 = entries[(policy_name(0), "policy")][1], entries[(prm_name(0), "prm")][1]
    assert entries[(prm_name(1), "prm")][2] == prm0 and entries[(policy_name(1), "policy")][2] == policy0
    # Round 1 sampled and rolled out from round 0's RL checkpoint.
    writers = {m for (m,) in con.execute("SELECT DISTINCT model FROM solutions WHERE source = ? UNION "
                                        "SELECT DISTINCT model FROM rollouts WHERE source = ?",
                                        [round_source(1)] * 2).fetchall()}
    assert len(writers) == 1 and writers.pop().endswith("@" + policy0)
    # Lineage through SQL: round 1's policy -> round 0's -> the shipped policy.
    chain = con.execute("SELECT ancestor_version FROM model_lineage WHERE version = ? ORDER BY depth",
                        [entries[(policy_name(1), "policy")][1]]).fetchall()
    assert [v for (v,) in chain] == [entries[(policy_name(1), "policy")][1], policy0, start]

    assert _dangling(root) == []

    # Re-materialize round 1 with a PRM bar no PRM can pass: its new PRM is registered rejected beside the earlier
    # versions (one commit), RL is skipped, and "latest" lookups never return it.
    from pipelines.definitions import defs

    models_version, accepted = wh.version("models"), round_prm(root, 1)
    n_registered = len(_entries(root))
    with dg.DagsterInstance.from_config(str(project_home)) as instance:
        result = defs.resolve_job_def("flywheel").execute_in_process(
            partition_key="1", instance=instance, raise_on_error=False,
            run_config=tiny_config(models, prm_tolerance=-1.0),
            asset_selection=[dg.AssetKey("flywheel_prm"), dg.AssetKey("flywheel_policy")])
    checks = {e.check_name: e.passed for e in result.get_asset_check_evaluations()}
    assert checks == {"flywheel_prm_no_worse": False}
    materialized = [e.asset_key for e in result.all_events if e.is_step_materialization]
    assert materialized == [dg.AssetKey("flywheel_prm")]  # RL did not run on the PRM that failed its check
    assert Warehouse(root).version("models") == models_version + 1 and len(_entries(root)) == n_registered + 1
    rejected = latest_model(root, "prm", source=round_source(1), name=prm_name(1), include_rejected=True)
    assert rejected.status == "rejected" and "new PRM F1" in rejected.status_note
    assert round_prm(root, 1) == (None if Path(rejected.uri) == accepted else accepted)

    # The same bar under on_rejected_prm="keep_last": the check warns instead of blocking, and RL runs on the PRM
    # round 1 hands on (the entry records its round).
    with dg.DagsterInstance.from_config(str(project_home)) as instance:
        result = defs.resolve_job_def("flywheel").execute_in_process(
            partition_key="1", instance=instance, raise_on_error=False,
            run_config=tiny_config(models, prm_tolerance=-1.0, on_rejected_prm="keep_last"),
            asset_selection=[dg.AssetKey("flywheel_prm"), dg.AssetKey("flywheel_policy")])
    (warned,) = [e for e in result.get_asset_check_evaluations() if e.check_name == "flywheel_prm_no_worse"]
    assert not warned.passed and warned.severity == dg.AssetCheckSeverity.WARN
    assert [e.asset_key for e in result.all_events if e.is_step_materialization] == [
        dg.AssetKey("flywheel_prm"), dg.AssetKey("flywheel_policy")]
    handed = usable_prm(root, 1, FlywheelConfig(on_rejected_prm="keep_last"), "test")
    policy = latest_model(root, "policy", source=round_source(1), name=policy_name(1), include_rejected=True)
    assert policy.training["reward_prm"] == handed.version and policy.metrics["reward_prm_round"] == handed.round
    assert _dangling(root) == []

    # Re-materialize round 0's PRM after both rounds: a new version beside the old; nothing dangles.
    later = [name for name, *_ in _entries(root)].count(prm_name(1))  # round 1's accepted and rejected PRMs
    with dg.DagsterInstance.from_config(str(project_home)) as instance:
        result = defs.resolve_job_def("flywheel").execute_in_process(
            partition_key="0", instance=instance, raise_on_error=False, run_config=tiny_config(models),
            asset_selection=[dg.AssetKey("flywheel_prm")])
    assert result.success
    assert _dangling(root) == []
    assert [name for name, *_ in _entries(root)].count(prm_name(1)) == later == 3  # later rounds untouched
