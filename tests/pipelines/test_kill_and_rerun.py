"""``kill -9`` of the demo during labeling, then the demo again: it frees the dead run's slot, resumes, finishes.

Real processes and a real instance with the project's dagster.yaml (one slot per pool), on the tiny config
of test_full_graph.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import pytest

from assets.partitions import partition_key
from tests.pipelines.conftest import tiny_run_config
from warehouse import connect

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

DAY = "2026-11-18"
LABELING = {"mc_labels", "omegaprm_labels"}  # engine-bound: a kill there leaves the engine slot claimed
PROJECT_ROOT = Path(__file__).resolve().parents[2]
# What `make demo` does, on the tiny config, without the RL run (tests/prm/rl covers it). The exit code is the
# refresh run's: the model half that follows it trains on everything labeled so far, and the tiny partition's
# labels may well be all one class.
DEMO = ("import json, sys\nfrom pipelines.demo import run\n"
        "results = run(sys.argv[1], 'arith', json.loads(sys.argv[2]), rl=False)\n"
        "print(json.dumps({r.job_def.name: r.success for r in results}))\n"
        "sys.exit(0 if len(results) > 1 and results[1].success else 1)\n")


def _engine_holders(instance: dg.DagsterInstance) -> set[str]:
    """Runs holding a slot of the engine pool."""
    return {s.run_id for s in instance.event_log_storage.get_concurrency_info("engine").claimed_slots}


def _labeling_run(instance: dg.DagsterInstance) -> str | None:
    """The refresh run that has started a labeling step, if one has."""
    for run in instance.get_runs(dg.RunsFilter(job_name="refresh")):
        if any(e.step_key in LABELING for e in instance.all_logs(run.run_id, of_type=dg.DagsterEventType.STEP_START)):
            return run.run_id
    return None


def test_a_demo_killed_during_labeling_is_released_and_resumed_by_the_next(
    tmp_path: Path, project_home: Path, tiny_policy_dir, tiny_context
) -> None:
    config = json.dumps(tiny_run_config(str(tiny_policy_dir), tiny_context))
    demo = [sys.executable, "-c", DEMO, DAY, config]

    with (tmp_path / "first.log").open("w") as log:
        first = subprocess.Popen(demo, cwd=PROJECT_ROOT, env=os.environ, stdout=log, stderr=subprocess.STDOUT)
        with dg.DagsterInstance.from_config(str(project_home)) as instance:
            deadline = time.monotonic() + 900
            # Kill while a labeling step holds the engine slot (between steps the slot is free: no bug to show).
            while (dead := _labeling_run(instance)) is None or dead not in _engine_holders(instance):
                assert first.poll() is None, (tmp_path / "first.log").read_text()[-3000:]
                assert time.monotonic() < deadline, "labeling never started"
                time.sleep(0.2)
            first.kill()  # SIGKILL: no handler, no cleanup, as `kill -9`
            first.wait()
            # The bug's precondition: the dead run still holds the engine slot.
            assert _engine_holders(instance) == {dead}

    with (tmp_path / "second.log").open("w") as log:
        again = subprocess.run(demo, cwd=PROJECT_ROOT, env=os.environ, stdout=log, stderr=subprocess.STDOUT,
                               timeout=1500)
    output = (tmp_path / "second.log").read_text()
    assert again.returncode == 0, output[-3000:]
    assert f"released pool 'engine' from dead run {dead}" in output

    with dg.DagsterInstance.from_config(str(project_home)) as instance:
        assert instance.get_run_by_id(dead).status == dg.DagsterRunStatus.FAILURE
        assert instance.event_log_storage.get_concurrency_info("engine").claimed_slots == []
        (latest,) = instance.fetch_materializations(dg.AssetRecordsFilter(
            asset_key=dg.AssetKey("solutions"), asset_partitions=[partition_key(DAY, "arith")]), limit=1).records
        meta = latest.asset_materialization.metadata
        # Resumed, not re-sampled: the solutions (and the labels paid for before the kill) are the dead run's.
        assert latest.run_id != dead and meta["reused"].value is True and meta["reused_from_run"].value == dead
    con = connect(tmp_path / "warehouse")
    (dupes,) = con.execute("SELECT count(*) FROM (SELECT solution_id, step_idx, method FROM step_labels "
                           "GROUP BY ALL HAVING count(*) > 1)").fetchall()[0]
    (orphans,) = con.execute("SELECT count(*) FROM step_labels ANTI JOIN solutions USING (solution_id)").fetchall()[0]
    (audited,) = con.execute("SELECT count(*) FROM label_audit").fetchall()[0]
    assert dupes == 0 and orphans == 0 and audited >= 1
