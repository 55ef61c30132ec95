"""An engine worker that does not start in time is stopped with everything it started: no orphan process (vLLM's
engine core, multiprocessing's resource_tracker) outlives it (issue 38 item 12)."""

from __future__ import annotations

from pathlib import Path

import pytest

from prm.generation.worker_process import WorkerDiedError, WorkerProcess


def _running(pid: int) -> bool:
    """Whether ``pid`` is a process that has not exited (a zombie awaiting its reaper has)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return text[text.rindex(")") + 2] != "Z"


def test_a_start_timeout_stops_the_worker_and_what_it_started(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    stopped = r"took over 5 s starting the engine and was stopped; raise startup_timeout_s"
    with pytest.raises(WorkerDiedError, match=stopped):
        WorkerProcess("tests.prm.hanging_worker", {"pid_file": str(pid_file)}, startup_timeout_s=5.0,
                      load_error="the test engine failed to build")
    child = int(pid_file.read_text())
    assert not _running(child), f"the worker's own process {child} outlived it"
