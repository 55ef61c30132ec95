"""``prm-reward serve`` in a process of its own on a free port of 127.0.0.1, as a user starts it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx

from warehouse import PROJECT_ROOT


@contextmanager
def served_cli(*args: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """Run ``python -m prm.reward_server.cli serve ARGS --host 127.0.0.1 --port <free>`` until ``/ready`` answers
    200; yields its URL and terminates it afterwards."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "prm.reward_server.cli", "serve", *args, "--host", "127.0.0.1",
                             "--port", str(port)],
                            cwd=PROJECT_ROOT, env={**os.environ, "PYTHONPATH": str(PROJECT_ROOT), **(env or {})},
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        url, deadline = f"http://127.0.0.1:{port}", time.monotonic() + 600  # a hang guard, not a speed bound
        while True:
            try:
                if httpx.get(f"{url}/ready").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert proc.poll() is None, proc.stdout.read()
            assert time.monotonic() < deadline, "the server did not get ready in 600 s"
            time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        proc.wait(30)
