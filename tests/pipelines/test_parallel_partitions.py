"""Two partitions of the refresh job as two runs at once: one Dagster instance, one warehouse, two processes.

What a cluster does (one run per partition, see deploy/), on this machine: each run is its own process that
calls ``execute_in_process`` against the same DAGSTER_HOME (the project's dagster.yaml: one slot per pool) and
the same ``$PRM_DATA_ROOT``. The steps without a pool (problems, formal verification, labels from stored
rollouts, consensus, the audit) run side by side; the engine-bound steps (pool ``engine``, limit 1) take
turns across the two runs. That is intended: on one machine two engines at once would fight over its cores
and memory, and deploy/dagster.yaml raises the limit on a cluster where each run has its own GPU.

Tiny config of test_full_graph.py; a few minutes on 2 cores.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest

from assets.partitions import register_sources
from assets.problems import ProblemsConfig
from pipelines.definitions import defs
from prm.tasks.sources import load_source
from tests.pipelines.conftest import tiny_run_config
from warehouse import connect
from warehouse.schemas import PRIMARY_KEYS

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

DAYS = ("2026-11-19", "2026-11-20")  # the tiny config draws disjoint problems on these two days (asserted)
SOURCE = "arith"
PROJECT_ROOT = Path(__file__).resolve().parents[2]
# One refresh run of (argv[1], argv[2]) with run config argv[3], against $DAGSTER_HOME; exit code 0 on success.
REFRESH = ("import json, sys\nimport dagster as dg\nfrom pipelines.instance import ensure_dagster_home\n"
           "ensure_dagster_home()\nfrom pipelines.definitions import defs\n"
           "from assets.partitions import partition_key\nfrom pipelines.recovery import owner_tags\n"
           "result = defs.resolve_job_def('refresh').execute_in_process(\n"
           "    partition_key=partition_key(sys.argv[1], sys.argv[2]), instance=dg.DagsterInstance.get(),\n"
           "    run_config=json.loads(sys.argv[3]), tags=owner_tags(), raise_on_error=False)\n"
           "print(json.dumps({'run_id': result.run_id, 'success': result.success}))\n"
           "sys.exit(0 if result.success else 1)\n")


def _expected_problem_ids(day: str, run_config: dict) -> set[str]:
    """The problem ids the ``problems`` asset draws for (day, arith) under ``run_config``."""
    config = ProblemsConfig(**run_config["ops"]["problems"]["config"])
    loaded = load_source(SOURCE, day, arith=config.to_library(), seed=config.seed, inbox=Path("/nonexistent"))
    return {r.problem_id for r in loaded.records}


def _step_spans(instance: dg.DagsterInstance, run_id: str, steps: set[str]) -> list[tuple[float, float, str]]:
    """(start, end, step) of each of ``steps`` that ran in ``run_id``, from the run's event log."""
    starts, ends = {}, {}
    for record in instance.all_logs(run_id):
        event = record.dagster_event
        if event is None or event.step_key not in steps:
            continue
        if event.event_type == dg.DagsterEventType.STEP_START:
            starts[event.step_key] = record.timestamp
        elif event.event_type in (dg.DagsterEventType.STEP_SUCCESS, dg.DagsterEventType.STEP_FAILURE):
            ends[event.step_key] = record.timestamp
    return [(starts[s], ends[s], s) for s in starts]


def test_two_partitions_run_in_parallel_into_one_warehouse(
    tmp_path: Path, project_home: Path, tiny_policy_dir, tiny_context
) -> None:
    config = tiny_run_config(str(tiny_policy_dir), tiny_context)
    # Each run also starts a judge engine; two of them at the default 2 GiB of KV cache is more than a test needs.
    config["resources"]["judge"] = {"config": {"kv_cache_gib": 0.5}}
    expected = {day: _expected_problem_ids(day, config) for day in DAYS}
    # Overlapping draws would make the second partition skip the first one's problems: not what this tests.
    assert expected[DAYS[0]] and not expected[DAYS[0]] & expected[DAYS[1]]
    with dg.DagsterInstance.from_config(str(project_home)) as instance:
        register_sources(instance, [SOURCE])

    logs = {day: tmp_path / f"{day}.log" for day in DAYS}
    procs = {}
    for day in DAYS:
        with logs[day].open("w") as log:
            procs[day] = subprocess.Popen([sys.executable, "-c", REFRESH, day, SOURCE, json.dumps(config)],
                                          cwd=PROJECT_ROOT, env=os.environ, stdout=log, stderr=subprocess.STDOUT)
    for day, proc in procs.items():
        assert proc.wait(timeout=1500) == 0, logs[day].read_text()[-3000:]
    run_ids = {day: json.loads(logs[day].read_text().strip().splitlines()[-1])["run_id"] for day in DAYS}

    with dg.DagsterInstance.from_config(str(project_home)) as instance:
        runs = {day: instance.get_run_record_by_id(run_ids[day]) for day in DAYS}
        assert all(r.dagster_run.status == dg.DagsterRunStatus.SUCCESS for r in runs.values())
        # The runs overlapped in time: each started before the other ended.
        (a, b) = runs.values()
        assert a.start_time < b.end_time and b.start_time < a.end_time
        # ... but no two engine-bound steps did: the engine pool has one slot, whichever run holds it.
        engine = {n.name for n in defs.resolve_job_def("refresh").graph.nodes if n.definition.pool == "engine"}
        spans = sorted(span for day in DAYS for span in _step_spans(instance, run_ids[day], engine))
        assert len(spans) == 2 * len(engine)
        assert all(end <= next_start for (_, end, _), (next_start, _, _) in itertools.pairwise(spans)), spans
        assert instance.event_log_storage.get_concurrency_info("engine").claimed_slots == []

    con = connect(tmp_path / "warehouse")
    for table in ("problems", "solutions", "steps", "rollouts", "step_labels", "judgments", "verifications"):
        key = ", ".join(PRIMARY_KEYS[table])
        (dupes,) = con.execute(f"SELECT count(*) FROM (SELECT {key} FROM {table} GROUP BY ALL HAVING count(*) > 1)"
                               ).fetchall()[0]
        assert dupes == 0, table
    for day in DAYS:
        problems = {p for (p,) in con.execute("SELECT problem_id FROM problems WHERE day = ? AND source = ?",
                                              [day, SOURCE]).fetchall()}
        assert problems == expected[day]
        # 2 samples per problem (tiny config), each filed under its own problem's partition.
        (n_solutions, misfiled) = con.execute(
            "SELECT count(*), count(*) FILTER (WHERE p.day <> s.day) FROM solutions s JOIN problems p "
            "USING (problem_id) WHERE s.day = ?", [day]).fetchall()[0]
        assert (n_solutions, misfiled) == (2 * len(problems), 0)
        # Every label and verdict of the partition belongs to one of its own solutions.
        for table in ("steps", "rollouts", "step_labels", "judgments", "verifications"):
            (foreign,) = con.execute(f"SELECT count(*) FROM {table} t ANTI JOIN solutions s "
                                     "ON t.solution_id = s.solution_id AND t.day = s.day WHERE t.day = ?",
                                     [day]).fetchall()[0]
            assert foreign == 0, (table, day)
        methods = {m for (m,) in con.execute("SELECT DISTINCT method FROM step_labels WHERE day = ?", [day]).fetchall()}
        assert {"mc", "omegaprm", "sympy", "judge"} <= methods, day
        (audited,) = con.execute("SELECT count(*) FROM label_audit WHERE day = ? AND run_id = ?",
                                 [day, run_ids[day]]).fetchall()[0]
        assert audited >= 1, day
