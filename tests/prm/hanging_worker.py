"""A worker for prm.generation.worker_process whose engine never finishes building: it starts a process of its own
(as vLLM starts its engine core and multiprocessing its resource_tracker), writes that process's pid to
``config["pid_file"]``, then waits forever. tests/prm/test_worker_process.py runs it as ``python -m``."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from prm.generation.worker_process import worker_main


def build(config: dict[str, Any]) -> Any:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    Path(config["pid_file"]).write_text(str(child.pid))
    while True:
        time.sleep(1)


if __name__ == "__main__":
    worker_main(sys.argv[1:], build)
