"""No process outlives a failed or interrupted engine worker, not even as a zombie (issue 52 item 5: a failed recipe
run left defunct workers). The worker's own children (vLLM's engine core, multiprocessing's resource tracker) used
to be orphaned to PID 1 when the worker went first, and stayed defunct under a PID 1 that never reaps.

The test process makes itself the subreaper of its descendants (Linux ``PR_SET_CHILD_SUBREAPER``), as such a PID 1
would be, minus the reaping: whatever the worker leaves behind becomes the test's own child, running or defunct, and
is counted, instead of being reaped by init behind the test's back."""

from __future__ import annotations

import ctypes
import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from prm.generation.processes import child_pids
from prm.generation.worker_process import WorkerDiedError, WorkerProcess

_PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h


class _Interrupted(BaseException):
    """What Ctrl-C is to a run: raised in the main thread while it waits on the worker."""


def _state(pid: int) -> str | None:
    """``pid``'s state letter in /proc ("Z": defunct), None once it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2]


@pytest.fixture
def orphans() -> Iterator[set[int]]:
    """Become the subreaper for the test; yields the children this process had before it (not the worker's). On
    the way out, stops and reaps whatever was left, so a failure here leaves nothing to the next test."""
    if not Path("/proc/self/stat").exists():
        pytest.skip("needs Linux /proc")
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        pytest.skip("prctl(PR_SET_CHILD_SUBREAPER) is not available")
    before = set(child_pids())
    try:
        yield before
    finally:
        libc.prctl(_PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
        for pid in set(child_pids()) - before:
            if _state(pid) != "Z":
                os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)


def _left_behind(before: set[int], started: list[int]) -> dict[int, str]:
    """Processes the worker started, or that became this process's children during the test, that still exist."""
    pids = set(started) | (set(child_pids()) - before)
    return {pid: state for pid in pids if (state := _state(pid)) is not None}


def _config(tmp_path: Path, **extra: object) -> dict[str, object]:
    return {"pid_file": str(tmp_path / "pids"), "busy_file": str(tmp_path / "busy"), **extra}


def _started(tmp_path: Path) -> list[int]:
    return [int(line) for line in (tmp_path / "pids").read_text().split()]


def test_a_worker_whose_engine_fails_to_build_leaves_no_process(tmp_path: Path, orphans: set[int]) -> None:
    with pytest.raises(WorkerDiedError, match="could not load the test engine"):
        WorkerProcess("tests.prm.spawning_worker", _config(tmp_path, fail=True), startup_timeout_s=120,
                      load_error="could not load the test engine")
    started = _started(tmp_path)
    assert len(started) == 2
    assert _left_behind(orphans, started) == {}


def test_a_run_interrupted_mid_sampling_leaves_no_process(tmp_path: Path, orphans: set[int]) -> None:
    worker = WorkerProcess("tests.prm.spawning_worker", _config(tmp_path), startup_timeout_s=120,
                           load_error="could not load the test engine")
    busy = tmp_path / "busy"

    def interrupt_once_sampling() -> None:
        while not busy.exists() and worker.alive:
            time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGUSR1)

    def raise_interrupted(signum: int, frame: object) -> None:
        raise _Interrupted

    previous = signal.signal(signal.SIGUSR1, raise_interrupted)
    try:
        threading.Thread(target=interrupt_once_sampling, daemon=True).start()
        with pytest.raises(_Interrupted):
            worker.call("generate", None, timeout_s=600, doing="generating")
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert busy.exists()  # it was interrupted mid-sampling, not before
    assert not worker.alive  # the interrupted call stopped the worker; closing later is a no-op
    worker.close()
    assert _left_behind(orphans, _started(tmp_path)) == {}


def test_a_worker_closed_after_a_good_run_leaves_no_process(tmp_path: Path, orphans: set[int]) -> None:
    worker = WorkerProcess("tests.prm.spawning_worker", _config(tmp_path), startup_timeout_s=120,
                           load_error="could not load the test engine")
    worker.close()
    assert _left_behind(orphans, _started(tmp_path)) == {}


def test_stopping_a_server_that_exited_stops_the_processes_it_left(tmp_path: Path) -> None:
    """An OpenAI server whose API process died still had its engine running: stop() returned as soon as it saw the
    API process gone."""
    import subprocess
    import sys

    from prm.generation import OpenAIServer

    leave_a_child = ("import subprocess, sys; child = subprocess.Popen(['sleep', '600']); "
                     "open(sys.argv[1], 'w').write(str(child.pid))")
    process = subprocess.Popen([sys.executable, "-c", leave_a_child, str(tmp_path / "pid")], start_new_session=True)
    assert process.wait(timeout=60) == 0
    engine = int((tmp_path / "pid").read_text())
    assert _state(engine) not in (None, "Z")
    OpenAIServer(process=process, base_url="http://127.0.0.1:1/v1", log_path=tmp_path / "log").stop()
    assert _state(engine) in (None, "Z")  # stopped (a zombie until init, its parent now, reaps it)
