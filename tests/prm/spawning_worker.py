"""A worker for prm.generation.worker_process that starts processes as vLLM's engine does: a ``multiprocessing``
spawn child (vLLM's engine core; spawning also starts multiprocessing's resource tracker) and a plain subprocess.
It writes their pids to ``config["pid_file"]``, one a line, then fails to build (``config["fail"]``) or serves
``generate``, which writes ``config["busy_file"]`` and samples forever. tests/prm/test_worker_reaping.py runs it as
``python -m``."""

from __future__ import annotations

import multiprocessing
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from prm.generation.worker_process import worker_main

FOREVER_S = 600  # the test stops these processes; they never end by themselves within it


def _engine_core() -> None:
    time.sleep(FOREVER_S)


class _Engine:
    info = "spawning test engine"

    def __init__(self, busy_file: str) -> None:
        self.busy_file = busy_file

    def handle(self, kind: str, payload: Any) -> Any:
        Path(self.busy_file).write_text("sampling")
        time.sleep(FOREVER_S)


def build(config: dict[str, Any]) -> Any:
    core = multiprocessing.get_context("spawn").Process(target=_engine_core)
    core.start()
    helper = subprocess.Popen([sys.executable, "-c", f"import time; time.sleep({FOREVER_S})"])
    Path(config["pid_file"]).write_text(f"{core.pid}\n{helper.pid}\n")
    if config.get("fail"):
        raise RuntimeError("engine core initialization failed (the test's failure)")
    return _Engine(config["busy_file"])


if __name__ == "__main__":
    worker_main(sys.argv[1:], build)
