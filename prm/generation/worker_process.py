"""An engine in a worker process of its own: ``python -m <module> FD``, talking over an inherited socket.

A fresh interpreter, not a fork or `multiprocessing` child, so it never re-imports the caller's ``__main__``
and works the same under pytest, Dagster's asset subprocesses, notebooks and scripts without a ``__main__``
guard (vLLM's engine core spawns processes of its own, which needs exactly that). Messages are pickled
``(kind, payload)`` pairs; the worker exits when the socket closes, so an orphaned engine never outlives its
owner. The worker stops and reaps what it started (vLLM's engine core, multiprocessing's resource_tracker) before it
exits, a SIGTERM included, so none is orphaned to a PID 1 that may never reap it (:mod:`prm.generation.processes`);
and it leads a process group of its own, which its owner stops after it, for a worker killed or stuck mid-start.
A call interrupted in the owner (Ctrl-C, a failed run) stops the worker at once: it is busy with that message,
so it could not read a shutdown request, and its late answer would go to the next call. The generation engine
(:mod:`prm.generation.vllm_worker`) and the vLLM scoring engine (:mod:`prm.scoring.vllm_worker`) both run this way.

Parent side: :class:`WorkerProcess`. Worker side: :func:`worker_main` with a ``build(config)`` that returns
an object with ``info`` and ``handle(kind, payload)``.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import weakref
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Protocol

from prm.generation.constants import LOG_TAIL_LINES, WORKER_SHUTDOWN_S
from prm.generation.processes import reap_children, stop_group
from warehouse import PROJECT_ROOT

# Liveness checks while waiting on the worker: short enough to report a crash within a second.
_POLL_S = 1.0
_STARTING = "starting the engine"


class WorkerDiedError(RuntimeError):
    """The engine worker process exited or failed; its log tail is in the message, its log at ``log_path``."""

    def __init__(self, message: str, log_path: Path | None = None) -> None:
        super().__init__(message)
        self.log_path = log_path


class Engine(Protocol):
    """What a worker serves: ``info`` is sent once when ready, ``handle`` answers every later message."""

    info: Any

    def handle(self, kind: str, payload: Any) -> Any: ...


class WorkerProcess:
    """Start ``python -m module``, send it ``config``, and wait for its engine to be ready.

    ``load_error`` opens the message raised when the engine fails to build (the worker's traceback and log
    tail follow it). :meth:`call` sends one message and returns the answer; calls are serialized.
    """

    def __init__(self, module: str, config: Any, *, startup_timeout_s: float, load_error: str,
                 log_prefix: str = "prm-worker-") -> None:
        self._lock = threading.Lock()
        log = tempfile.NamedTemporaryFile(prefix=log_prefix, suffix=".log", delete=False)  # noqa: SIM115
        self.log_path = Path(log.name)
        parent_sock, child_sock = socket.socketpair()
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PROJECT_ROOT), env.get("PYTHONPATH")]))
        self._proc = subprocess.Popen(
            [sys.executable, "-m", module, str(child_sock.fileno())],
            pass_fds=(child_sock.fileno(),),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,  # its own process group, so _stop_worker can stop its children with it
        )
        log.close()
        child_sock.close()
        self._conn = Connection(parent_sock.detach())
        self._finalizer = weakref.finalize(self, _stop_worker, self._proc, self._conn)
        try:
            self._conn.send(config)
            kind, payload = self._receive(startup_timeout_s, _STARTING)
        except BaseException:
            self.close()
            raise
        if kind != "ready":
            self.close()
            raise WorkerDiedError(f"{load_error}; fix the cause below (full log: {self.log_path}):\n{payload}\n"
                                  f"last log lines:\n{self.log_tail()}", self.log_path)
        self.info: Any = payload

    @property
    def alive(self) -> bool:
        """False once closed or once the process has exited."""
        return self._finalizer.alive and self._proc.poll() is None

    def call(self, kind: str, payload: Any, *, timeout_s: float, doing: str) -> Any:
        """The worker's answer to ``(kind, payload)``; WorkerDiedError when it fails, dies or times out."""
        with self._lock:
            if not self._finalizer.alive:
                raise WorkerDiedError("the engine worker is closed; create a new one")
            try:
                self._conn.send((kind, payload))
                status, answer = self._receive(timeout_s, doing)
            except BaseException:
                self._abandon()  # see the module docstring: interrupted mid-call
                raise
        if status != "ok":
            raise WorkerDiedError(f"the engine failed while {doing} (log: {self.log_path}):\n{answer}", self.log_path)
        return answer

    def close(self) -> None:
        """Stop the worker (and with it the engine); idempotent."""
        self._finalizer()

    def _abandon(self) -> None:
        """Stop the worker without asking it first (it cannot read a request now); idempotent."""
        if self._finalizer.detach() is not None:
            _stop_worker(self._proc, self._conn, graceful=False)

    def log_tail(self, lines: int = LOG_TAIL_LINES) -> str:
        """The last ``lines`` lines of the worker's log (its stdout and stderr)."""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def _receive(self, timeout_s: float, doing: str) -> tuple[str, Any]:
        """The worker's next message, raising with its log tail if it dies or exceeds ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        while not self._conn.poll(_POLL_S):
            if self._proc.poll() is not None:
                raise WorkerDiedError(f"the engine worker exited with code {self._proc.returncode} while {doing}; "
                                      f"last log lines ({self.log_path}):\n{self.log_tail()}", self.log_path)
            if time.monotonic() > deadline:
                self._abandon()  # stuck: it cannot read a shutdown request, so stop it without waiting
                advice = "raise its timeout or shrink the batch"
                if doing == _STARTING:
                    advice = ("raise startup_timeout_s (in a Dagster run: resources.generation.config."
                              "startup_timeout_s) if the machine is only slow")
                raise WorkerDiedError(f"the engine worker took over {timeout_s:.0f} s {doing} and was stopped; "
                                      f"{advice}. Log:\n{self.log_tail()}", self.log_path)
        try:
            return self._conn.recv()
        except EOFError:
            self._proc.wait(timeout=WORKER_SHUTDOWN_S)
            raise WorkerDiedError(f"the engine worker closed its connection while {doing} (exit code "
                                  f"{self._proc.returncode}); last log lines:\n{self.log_tail()}",
                                  self.log_path) from None


def _stop_worker(proc: subprocess.Popen[bytes], conn: Connection, graceful: bool = True) -> None:
    """Ask the worker to exit (unless not ``graceful``), then terminate/kill it if it does not, then whatever of its
    process group is left; runs at close, GC or exit."""
    try:
        if graceful and proc.poll() is None:
            conn.send(("shutdown", None))
    except OSError:
        pass
    finally:
        conn.close()
    for stop in (None, proc.terminate, proc.kill)[0 if graceful else 1:]:
        if stop is not None:
            stop()
        try:
            proc.wait(timeout=WORKER_SHUTDOWN_S)
            break
        except subprocess.TimeoutExpired:
            continue
    stop_group(proc.pid, WORKER_SHUTDOWN_S)


def serve(conn: Connection, build: Callable[[Any], Engine], alive: Callable[[Engine], bool] | None = None) -> None:
    """Build the engine from the first message, then answer messages until ``shutdown`` or EOF.

    ``alive(engine)`` is asked after a failed message; False (the engine died) ends the worker instead of
    failing every later call.
    """
    config = conn.recv()
    try:
        engine = build(config)
    except BaseException:
        conn.send(("error", traceback.format_exc()))
        return
    conn.send(("ready", engine.info))
    while True:
        try:
            kind, payload = conn.recv()
        except (EOFError, OSError):
            return
        if kind == "shutdown":
            return
        try:
            conn.send(("ok", engine.handle(kind, payload)))
        except Exception:
            conn.send(("error", traceback.format_exc()))
            if alive is not None and not alive(engine):
                return


def worker_main(argv: list[str], build: Callable[[Any], Engine],
                alive: Callable[[Engine], bool] | None = None) -> None:
    """A worker module's entry point: ``argv[0]`` is the inherited socket's file descriptor. However it ends (the
    socket closed, a failed build, SIGTERM from its owner), it stops and reaps the processes it started."""
    signal.signal(signal.SIGTERM, _exit_on_sigterm)
    conn = Connection(int(argv[0]))
    try:
        serve(conn, build, alive)
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the owner's SIGKILL still ends a cleanup that hangs
        conn.close()
        reap_children(WORKER_SHUTDOWN_S / 2)  # half the owner's patience: it kills the worker after all of it


def _exit_on_sigterm(signum: int, frame: object) -> None:
    """SIGTERM as SystemExit, so that the worker's ``finally`` reaps its children (Python's default dies at once)."""
    raise SystemExit(128 + signum)


def vllm_engine_alive(llm: Any) -> bool:
    """False once a ``vllm.LLM``'s engine core has died (later calls would all fail)."""
    try:
        return not llm.llm_engine.engine_core.resources.engine_dead
    except AttributeError:
        return True
