"""Dead runs holding pool slots: found by their process, failed, freed; waiting runs name who they wait for.

Fast: runs and slots are written straight into a test instance; the dead process is a real one, killed.
tests/pipelines/test_kill_and_rerun.py kills a real demo run.
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import dagster as dg
import pytest
import yaml

from pipelines.instance import DAGSTER_YAML, ensure_dagster_home
from pipelines.recovery import (
    PID_START_TAG,
    PID_TAG,
    SlotWatcher,
    _proc_stat,
    dead_run_sensor,
    main,
    owner_tags,
    release_dead_runs,
    slot_holders,
    slot_waits,
)

POOL = "engine"


@pytest.fixture
def pooled(tmp_path: Path):
    """A persistent test instance whose pools allow one slot, like the project's."""
    (tmp_path / "home").mkdir()
    with dg.instance_for_test(temp_dir=str(tmp_path / "home"),
                              overrides={"concurrency": {"pools": {"default_limit": 1}}}) as inst:
        inst.event_log_storage.set_concurrency_slots(POOL, 1)
        yield inst


@pytest.fixture
def dead_tags() -> dict[str, str]:
    """Owner tags of a process that ran and was killed (and reaped) before the test looks at it."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    tags = {**owner_tags(), PID_TAG: str(child.pid), PID_START_TAG: _proc_stat(child.pid)[1]}
    child.kill()
    child.wait()
    return tags


def _run(instance: dg.DagsterInstance, tags: dict[str, str],
         status: dg.DagsterRunStatus = dg.DagsterRunStatus.STARTED) -> str:
    run_id = str(uuid.uuid4())
    instance.add_run(dg.DagsterRun(job_name="refresh", run_id=run_id, status=status, tags=tags))
    return run_id


def _claim(instance: dg.DagsterInstance, run_id: str, step: str) -> bool:
    return instance.event_log_storage.claim_concurrency_slot(POOL, run_id, step).is_claimed


def _holding(instance: dg.DagsterInstance) -> list[str]:
    return [s.run_id for s in instance.event_log_storage.get_concurrency_info(POOL).claimed_slots]


def test_a_dead_run_is_failed_and_its_slot_goes_to_the_waiting_run(pooled, dead_tags) -> None:
    dead = _run(pooled, dead_tags)
    assert _claim(pooled, dead, "mc_labels")
    waiting = _run(pooled, owner_tags())
    assert not _claim(pooled, waiting, "solutions")

    (wait,) = slot_waits(pooled, {waiting})
    assert f"waits for pool '{POOL}'" in wait.message() and dead in wait.message()
    assert f"pid {dead_tags[PID_TAG]} gone" in wait.message()

    released = release_dead_runs(pooled)
    assert [h.run_id for h in released] == [dead]
    assert pooled.get_run_by_id(dead).status == dg.DagsterRunStatus.FAILURE
    assert _holding(pooled) == []
    assert _claim(pooled, waiting, "solutions")  # the waiting step's next try gets the freed slot
    assert release_dead_runs(pooled) == []  # the waiting run's process (this one) is alive


@pytest.mark.parametrize("case", ["live", "reused_pid", "finished"])
def test_only_runs_whose_process_is_gone_lose_their_slot(pooled, case: str) -> None:
    tags = owner_tags()
    status = dg.DagsterRunStatus.STARTED
    if case == "reused_pid":  # this pid, but a process that started at another time: the run's process is gone
        tags = {**tags, PID_START_TAG: str(int(tags[PID_START_TAG]) - 1)}
    if case == "finished":  # marked failed by hand: it keeps the slot, which is what the issue saw
        status = dg.DagsterRunStatus.FAILURE
    run_id = _run(pooled, tags, status)
    assert _claim(pooled, run_id, "rollouts")
    released = release_dead_runs(pooled)
    assert [h.run_id for h in released] == ([] if case == "live" else [run_id])
    assert _holding(pooled) == ([run_id] if case == "live" else [])
    if case == "finished":
        assert pooled.get_run_by_id(run_id).status == dg.DagsterRunStatus.FAILURE


def test_a_run_without_a_known_process_is_listed_not_freed(pooled, capsys) -> None:
    run_id = _run(pooled, {})  # launched elsewhere, no pid tag and no pid in its log
    assert _claim(pooled, run_id, "rollouts")
    waiting = _run(pooled, owner_tags())
    assert not _claim(pooled, waiting, "solutions")
    (holder,) = [h for h in slot_holders(pooled) if h.run_id == run_id]
    assert holder.alive is None and release_dead_runs(pooled) == []
    (wait,) = slot_waits(pooled, {waiting})
    assert f"python -m pipelines.recovery --run {run_id}" in wait.message()


def test_the_logged_pid_of_a_run_without_tags_is_checked(pooled, dead_tags) -> None:
    run_id = _run(pooled, {})
    run = pooled.get_run_by_id(run_id)
    from dagster._core.events import EngineEventData

    pooled.report_engine_event("Started process for run", run, EngineEventData.in_process(int(dead_tags[PID_TAG])))
    assert _claim(pooled, run_id, "rollouts")
    assert [h.run_id for h in release_dead_runs(pooled)] == [run_id]


def test_the_watcher_frees_a_holder_that_dies_while_its_run_waits(pooled, dead_tags) -> None:
    dead = _run(pooled, dead_tags)
    assert _claim(pooled, dead, "mc_labels")
    waiting = _run(pooled, owner_tags())
    assert not _claim(pooled, waiting, "solutions")
    said: list[str] = []
    watcher = SlotWatcher(pooled, waiting, log=said.append)
    watcher.check(now=0.0)
    assert said == [f"released pool '{POOL}' from dead run {dead} step mc_labels (STARTED, "
                    f"pid {dead_tags[PID_TAG]} gone)"]
    assert _claim(pooled, waiting, "solutions")


def test_the_watcher_names_a_live_holder_once_per_minute(pooled) -> None:
    holder = _run(pooled, owner_tags())
    assert _claim(pooled, holder, "mc_labels")
    waiting = _run(pooled, owner_tags())
    assert not _claim(pooled, waiting, "solutions")
    said: list[str] = []
    watcher = SlotWatcher(pooled, waiting, log=said.append)
    for now in (0.0, 10.0, 20.0, 61.0):
        watcher.check(now)
    assert len(said) == 2 and all(holder in m and "alive" in m for m in said)


def test_the_sensor_releases_dead_runs_and_tells_the_waiting_run(pooled, dead_tags) -> None:
    holder = _run(pooled, owner_tags())
    assert _claim(pooled, holder, "mc_labels")
    dead = _run(pooled, dead_tags)
    assert _claim(pooled, dead, "rollouts") is False  # queued behind the live holder, and dead
    waiting = _run(pooled, owner_tags())
    assert not _claim(pooled, waiting, "solutions")
    context = dg.build_sensor_context(instance=pooled)
    result = dead_run_sensor(context)
    assert "released 1 dead run(s); 1 step(s) waiting" in result.skip_message
    assert pooled.get_run_by_id(dead).status == dg.DagsterRunStatus.FAILURE
    told = [e.message for e in pooled.all_logs(waiting, of_type=dg.DagsterEventType.ENGINE_EVENT)]
    assert len(told) == 1 and holder in told[0]
    dead_run_sensor(dg.build_sensor_context(instance=pooled, cursor=context.cursor))
    assert len(pooled.all_logs(waiting, of_type=dg.DagsterEventType.ENGINE_EVENT)) == 1  # said once


def test_an_old_dagster_home_gains_run_monitoring_and_keeps_its_lines(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    home = tmp_path / "home"
    home.mkdir()
    (home / "dagster.yaml").write_text(DAGSTER_YAML + "retention:\n  schedule:\n    purge_after_days: 7\n")
    ensure_dagster_home(home)
    ensure_dagster_home(home)  # a second call adds nothing
    config = yaml.safe_load((home / "dagster.yaml").read_text())
    assert config["retention"]["schedule"]["purge_after_days"] == 7
    assert config["run_monitoring"]["enabled"] is True
    assert (home / "dagster.yaml").read_text().count("run_monitoring:") == 1
    with dg.DagsterInstance.from_config(str(home)) as instance:
        assert instance.run_monitoring_enabled
        assert instance.run_monitoring_settings["free_slots_after_run_end_seconds"] == 60


def test_the_cli_releases_a_run_by_hand_and_refuses_an_unknown_one(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    ensure_dagster_home()
    with dg.DagsterInstance.get() as instance:
        instance.event_log_storage.set_concurrency_slots(POOL, 1)
        run_id = _run(instance, {})
        assert _claim(instance, run_id, "rollouts")
    assert main([]) == 0
    assert f"pool '{POOL}': run {run_id} step rollouts (STARTED, process unknown)" in capsys.readouterr().out
    assert main(["--run", run_id]) == 0
    with dg.DagsterInstance.get() as instance:
        assert _holding(instance) == []
        assert instance.get_run_by_id(run_id).status == dg.DagsterRunStatus.FAILURE
    assert main(["--run", "no-such-run"]) == 1
    assert capsys.readouterr().err.startswith("Error: no run no-such-run")


def test_a_dead_run_that_holds_no_slot_is_released_too(pooled, dead_tags) -> None:
    """Killed between two pool steps (issue 38 item 12): no slot, but STARTED for good unless released."""
    dead = _run(pooled, dead_tags)
    live = _run(pooled, owner_tags())
    unknown = _run(pooled, {})  # no process to judge: left alone
    released = release_dead_runs(pooled)
    assert [h.run_id for h in released] == [dead]
    assert released[0].released() == f"released dead run {dead} ({released[0].status}, pid {dead_tags[PID_TAG]} " \
                                      "gone), which held no pool slot"
    statuses = {r: pooled.get_run_by_id(r).status for r in (dead, live, unknown)}
    assert statuses == {dead: dg.DagsterRunStatus.FAILURE, live: dg.DagsterRunStatus.STARTED,
                        unknown: dg.DagsterRunStatus.STARTED}
    assert release_dead_runs(pooled) == []
