"""Fixtures of the warehouse tests: Python processes that run a script against a warehouse."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator

import pytest

Spawn = Callable[..., subprocess.Popen]


@pytest.fixture
def spawn() -> Iterator[Spawn]:
    """``spawn(script, *args)``: a Python process running ``script`` with this test's imports; any still running
    when the test ends is killed."""
    started: list[subprocess.Popen] = []

    def start(script: str, *args: str, **popen: object) -> subprocess.Popen:
        proc = subprocess.Popen([sys.executable, "-c", script, *args],
                                env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}, **popen)
        started.append(proc)
        return proc

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
