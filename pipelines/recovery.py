"""Runs that died holding a pool slot (or between two pool steps): find them, fail them, free their slots, and say
who a waiting run waits for.

Every engine-bound step declares ``pool="engine"`` and the instance allows one slot per pool
(pipelines/instance.py). Dagster frees a step's slot when the step ends, so a run killed with ``kill -9``
keeps its slot for good and every later run waits on it without a word. Marking the run failed does not
free the slot; only ``free_concurrency_slots_for_run`` does. A run killed between two pool steps holds no slot
but stays STARTED for good; it is failed the same way.

A run is dead when its process is gone. The process is known from the ``prm/pid`` tags our in-process
launches carry (pid, its start time against pid reuse, and the host), else from the pid Dagster itself logs
when a run starts ("Started process for run (pid: N)" from ``dagster dev``'s launcher, "Executing steps in
process (pid: N)" from the in-process executor). A run whose process cannot be found is left alone and
listed; ``python -m pipelines.recovery --run RUN_ID`` frees it by hand.

Callers: ``pipelines.demo.run`` (before it launches, and every few seconds while its run waits), the
``dead_run_sensor`` for ``dagster dev``, and the CLI::

    .venv/bin/python -m pipelines.recovery            # list slot holders, release the dead ones
    .venv/bin/python -m pipelines.recovery --run ID   # fail run ID and free its slots, alive or not
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import dagster as dg

__all__ = ["SlotHolder", "SlotWait", "SlotWatcher", "dead_run_sensor", "owner_tags", "release_dead_runs",
           "release_run", "slot_holders", "slot_waits"]

PID_TAG = "prm/pid"
PID_START_TAG = "prm/pid_start"  # the process's start time in clock ticks since boot: a reused pid has another
HOST_TAG = "prm/host"
WATCH_INTERVAL_S = 10.0  # how often a waiting demo run looks for dead holders and names who it waits for
REPEAT_WAIT_MESSAGE_S = 60.0  # an unchanged "waiting for" message is repeated this often, not every tick


def owner_tags() -> dict[str, str]:
    """Tags for a run executed in this process, so a later process can tell whether it is still alive."""
    pid = os.getpid()
    tags = {PID_TAG: str(pid), HOST_TAG: socket.gethostname()}
    stat = _proc_stat(pid)
    if stat is not None:
        tags[PID_START_TAG] = stat[1]
    return tags


def _proc_stat(pid: int) -> tuple[str, str] | None:
    """(state, start time in clock ticks) from Linux's /proc/PID/stat; None where there is no /proc entry."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()  # the command name may hold spaces and parentheses
    return fields[0], fields[19]  # fields 3 (state) and 22 (starttime) of proc(5)


@dataclass(frozen=True)
class SlotHolder:
    """A run that holds a slot of ``pool`` (or waits for one) in the instance's concurrency tables; a dead run
    that holds none has ``pool`` "" (:func:`release_dead_runs` returns those too)."""

    pool: str
    run_id: str
    step_key: str | None
    status: str  # the run's Dagster status, or "missing" for a run deleted from the history
    pid: int | None  # the run's process, when known
    alive: bool | None  # None: its process is unknown, so it cannot be judged

    def describe(self) -> str:
        step = f" step {self.step_key}" if self.step_key else ""
        process = ("process unknown" if self.pid is None else
                   f"pid {self.pid} {'alive' if self.alive else 'gone'}")
        return f"run {self.run_id}{step} ({self.status}, {process})"

    def released(self) -> str:
        """The line that reports this run's release."""
        if not self.pool:
            return f"released dead {self.describe()}, which held no pool slot"
        return f"released pool '{self.pool}' from dead {self.describe()}"


@dataclass(frozen=True)
class SlotWait:
    """A step of ``run_id`` waiting for a slot of ``pool``, and the runs holding that pool's slots."""

    pool: str
    limit: int
    run_id: str
    step_key: str
    holders: tuple[SlotHolder, ...]

    def message(self) -> str:
        held = "; ".join(h.describe() for h in self.holders) or "no run"
        advice = ""
        if any(h.alive is None for h in self.holders):
            advice = (" - if that run is dead, free it with `.venv/bin/python -m pipelines.recovery --run "
                      f"{next(h.run_id for h in self.holders if h.alive is None)}`")
        return (f"step {self.step_key} of run {self.run_id} waits for pool '{self.pool}' "
                f"(limit {self.limit}), held by {held}{advice}")


def _process_alive(pid: int, started: str | None) -> bool:
    """Whether process ``pid`` (started at ``started`` ticks, when known) still runs on this machine."""
    if Path("/proc/self/stat").exists():
        stat = _proc_stat(pid)
        if stat is None:
            return False
        state, start = stat
        # A zombie was killed and awaits its parent's wait(); another start time is a reused pid.
        return state != "Z" and (started is None or start == started)
    try:  # no /proc (macOS): signal 0 checks existence only
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: it exists
        return True
    return True


def _logged_pid(instance: dg.DagsterInstance, run_id: str) -> int | None:
    """The pid Dagster logged for the run: its launcher's "Started process for run" or the in-process
    executor's "Executing steps in process"; the latest one wins (a resumed run gets a new process)."""
    pid = None
    for entry in instance.all_logs(run_id, of_type=dg.DagsterEventType.ENGINE_EVENT):
        data = entry.dagster_event.event_specific_data if entry.dagster_event else None
        value = getattr(getattr(data, "metadata", {}).get("pid"), "value", None)
        if value is not None and str(value).isdigit():
            pid = int(value)
    return pid


def _judge(instance: dg.DagsterInstance, run: dg.DagsterRun | None) -> tuple[str, int | None, bool | None]:
    """(status, pid, alive) of a run found in the concurrency tables."""
    if run is None:
        return "missing", None, False
    status = run.status.value
    if run.is_finished:
        return status, None, False
    tags = run.tags
    if PID_TAG in tags:
        if tags.get(HOST_TAG) != socket.gethostname():  # another machine's process cannot be checked here
            return status, int(tags[PID_TAG]), None
        return status, int(tags[PID_TAG]), _process_alive(int(tags[PID_TAG]), tags.get(PID_START_TAG))
    # Only the local launcher's pids are pids of this machine (a k8s or Docker launcher logs a container's).
    if not isinstance(instance.run_launcher, dg.DefaultRunLauncher):
        return status, None, None
    pid = _logged_pid(instance, run.run_id)
    return status, pid, None if pid is None else _process_alive(pid, None)


def slot_holders(instance: dg.DagsterInstance) -> list[SlotHolder]:
    """Every run that holds a pool slot or has a step queued for one, judged alive, dead or unknown."""
    storage = instance.event_log_storage
    if not storage.supports_global_concurrency_limits:
        return []
    infos = storage.get_concurrency_infos(sorted(storage.get_concurrency_keys()))
    entries = [(pool, slot.run_id, slot.step_key) for pool, info in infos.items() for slot in info.claimed_slots]
    claimed = {(run_id, step) for _, run_id, step in entries}
    entries += [(pool, p.run_id, p.step_key) for pool, info in infos.items() for p in info.pending_steps
                if (p.run_id, p.step_key) not in claimed]
    runs = {r.run_id: r for r in instance.get_runs(dg.RunsFilter(run_ids=sorted({e[1] for e in entries})))} \
        if entries else {}
    judged = {run_id: _judge(instance, runs.get(run_id)) for run_id in {e[1] for e in entries}}
    return [SlotHolder(pool, run_id, step, *judged[run_id]) for pool, run_id, step in entries]


def release_run(instance: dg.DagsterInstance, run_id: str, reason: str) -> None:
    """Mark ``run_id`` failed (when it has not finished) and free every pool slot it holds or waits for."""
    run = instance.get_run_by_id(run_id)
    if run is not None and not run.is_finished:
        instance.report_run_failed(run, reason)
    instance.event_log_storage.free_concurrency_slots_for_run(run_id)


_UNFINISHED = [dg.DagsterRunStatus.STARTING, dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.CANCELING]


def release_dead_runs(instance: dg.DagsterInstance) -> list[SlotHolder]:
    """Release every run that holds a slot while dead (process gone, finished, or deleted), and every unfinished
    run whose process is gone though it holds no slot (killed between two pool steps); return them.

    A live run, or one whose process is unknown, keeps its slots and its status.
    """
    judged = slot_holders(instance)
    dead: dict[str, SlotHolder] = {}
    for holder in judged:
        if holder.alive is False:
            dead.setdefault(holder.run_id, holder)
    seen = {h.run_id for h in judged}
    for run in instance.get_runs(dg.RunsFilter(statuses=_UNFINISHED)):
        if run.run_id not in seen:
            status, pid, alive = _judge(instance, run)
            if alive is False:
                dead[run.run_id] = SlotHolder("", run.run_id, None, status, pid, alive)
    for holder in dead.values():
        gone = "has finished" if holder.pid is None else f"lost its process (pid {holder.pid})"
        held = f"while holding pool '{holder.pool}'" if holder.pool else "between pool steps"
        release_run(instance, holder.run_id, f"run {holder.run_id} {gone} {held}; marked failed and its slots "
                    "freed by pipelines.recovery")
    return list(dead.values())


def slot_waits(instance: dg.DagsterInstance, run_ids: set[str] | None = None) -> list[SlotWait]:
    """Steps (of ``run_ids``, or of any run) queued for a pool slot, each with the runs holding the pool."""
    storage = instance.event_log_storage
    if not storage.supports_global_concurrency_limits:
        return []
    holders = slot_holders(instance)
    waits = []
    for pool, info in storage.get_concurrency_infos(sorted(storage.get_concurrency_keys())).items():
        claimed = {(s.run_id, s.step_key) for s in info.claimed_slots}
        owning = tuple(h for h in holders if h.pool == pool and (h.run_id, h.step_key) in claimed)
        # An assigned pending step has been handed a freed slot and takes it on its next try: not waiting.
        waits += [SlotWait(pool, info.limit, p.run_id, p.step_key, owning) for p in info.pending_steps
                  if (p.run_id, p.step_key) not in claimed and p.assigned_timestamp is None
                  and (run_ids is None or p.run_id in run_ids)]
    return waits


class SlotWatcher:
    """While a run of this process executes: release dead slot holders and report what it waits for.

    A context manager around ``execute_in_process``; ``log`` receives one line per release, and the
    "waits for" line when it changes or every REPEAT_WAIT_MESSAGE_S while it stays the same.
    """

    def __init__(self, instance: dg.DagsterInstance, run_id: str, log: Callable[[str], None],
                 interval_s: float = WATCH_INTERVAL_S) -> None:
        self.instance, self.run_id, self.log, self.interval_s = instance, run_id, log, interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="prm-slot-watcher", daemon=True)
        self._last: tuple[str, float] = ("", 0.0)

    def __enter__(self) -> SlotWatcher:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def check(self, now: float) -> None:
        for holder in release_dead_runs(self.instance):
            self.log(holder.released())
        message = "\n".join(w.message() for w in slot_waits(self.instance, {self.run_id}))
        last, when = self._last
        if message and (message != last or now - when >= REPEAT_WAIT_MESSAGE_S):
            self.log(message)
            self._last = (message, now)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self.check(time.monotonic())
            except Exception as error:  # the watcher only reports; it must never take the run down
                self.log(f"slot watcher: {type(error).__name__}: {error}")


@dg.sensor(minimum_interval_seconds=60, default_status=dg.DefaultSensorStatus.RUNNING,
           description="Fails runs whose process died holding a pool slot, frees their slots, and tells each "
           "waiting run which run holds the slot it waits for.")
def dead_run_sensor(context: dg.SensorEvaluationContext) -> dg.SkipReason:
    instance = context.instance
    released = release_dead_runs(instance)
    for holder in released:
        context.log.warning(holder.released())
    told = json.loads(context.cursor) if context.cursor else {}
    waits = slot_waits(instance)
    now = {}
    for wait in waits:
        key = f"{wait.run_id}/{wait.step_key}"
        now[key] = wait.message()
        run = instance.get_run_by_id(wait.run_id)
        if run is not None and told.get(key) != now[key]:  # once per change, in the waiting run's own log
            instance.report_engine_event(now[key], run, step_key=wait.step_key)
    context.update_cursor(json.dumps(now, sort_keys=True))
    return dg.SkipReason(f"released {len(released)} dead run(s); {len(waits)} step(s) waiting for a pool slot")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="List runs holding pool slots and release the dead ones.",
        epilog="Example: .venv/bin/python -m pipelines.recovery --run 3f1c2b9e-...")
    parser.add_argument("--run", metavar="RUN_ID", help="fail this run and free its slots even if it looks alive")
    args = parser.parse_args(argv)
    from pipelines.instance import ensure_dagster_home

    ensure_dagster_home()
    with dg.DagsterInstance.get() as instance:
        if args.run:
            if instance.get_run_by_id(args.run) is None and not any(h.run_id == args.run
                                                                    for h in slot_holders(instance)):
                print(f"Error: no run {args.run} in {os.environ['DAGSTER_HOME']} - list runs holding slots "
                      "with `python -m pipelines.recovery`", file=sys.stderr)
                return 1
            release_run(instance, args.run, f"run {args.run} released by hand (python -m pipelines.recovery)")
            print(f"released run {args.run}")
            return 0
        for holder in release_dead_runs(instance):
            print(holder.released())
        for holder in slot_holders(instance):
            print(f"pool '{holder.pool}': {holder.describe()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
