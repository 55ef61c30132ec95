"""A process pool for solver calls that survives hung and crashing calls.

Each worker runs items one at a time and reports each result as it finishes, so the parent knows which
item is running and for how long. An item that runs past ``timeout_s`` gets its worker killed (SIGKILL)
and replaced; that item's result is the task's failure value (``unverifiable``/``None``) and the rest
of its chunk goes to a new worker, so one hostile row never stalls a batch. Timeouts are wall-clock
waits in the parent: they work from any thread, unlike ``signal.alarm``.

Items are sent to workers in chunks (one message per chunk, one small reply per item): that is how
thousands of microsecond checks per second get through a pipe.

Workers start with ``forkserver`` (safe from threaded parents), which re-imports the caller's
``__main__``: scripts that use the pool need the usual ``if __name__ == "__main__":`` guard. Without it the
script's pipeline call runs again inside the forkserver; :func:`refuse_reimported_main` stops it there with a
message that says so (the pool, the generation backends and the pipeline entries call it), and a worker that
dies before serving raises in the parent instead of turning every item into ``unverifiable``.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib
import multiprocessing as mp
import os
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any

from verifiers.constants import DEFAULT_STEP_TIMEOUT_S
from verifiers.verdict import StepVerdict

__all__ = ["PoolConfig", "VerifierPool", "check_steps", "get_pool", "refuse_reimported_main"]

# Task name -> "module:function" run in the worker on each item. Any "module:function" also works.
TASKS = {
    "arithmetic": "verifiers.arithmetic:check_arithmetic_step",
    "logic": "verifiers.logic:check_logic_step",
    "grade": "verifiers.answers:grade_in_process",
    "symbolic": "verifiers.symbolic:check_symbolic_equations",
}
# Importing a task module (math_verify pulls in SymPy) is not part of an item's time budget.
_IMPORT_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class PoolConfig:
    """Worker-pool settings."""

    workers: int = 2  # this machine's 2 cores; use os.cpu_count() on bigger boxes
    chunk_size: int = 256  # items per message: amortizes pickling and pipe round trips (~50 µs each)
    start_method: str = "forkserver"  # safe from threaded parents (Dagster, vLLM); "fork" is not
    # RLIMIT_AS per worker, above the address space it starts with: a runaway item fails, the host survives
    memory_limit_mb: int | None = 2048

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise ValueError(f"workers must be >= 1, got {self.workers}; use 1 for a serial pool")
        if self.chunk_size < 1:
            raise ValueError(f"chunk_size must be >= 1, got {self.chunk_size}")


MAIN_GUARD_FIX = ("put the script's pipeline call under `if __name__ == \"__main__\":` (multiprocessing's forkserver "
                  "re-imports the main script in every worker process, so unguarded top-level code runs again there)")


def refuse_reimported_main(what: str) -> None:
    """Raise when called while multiprocessing re-imports the main script in a child process (forkserver or
    spawn bootstrapping): the script runs ``what`` at import time, and would run it again in every worker.

    >>> refuse_reimported_main("the pipeline")  # the main process: nothing to refuse
    """
    if getattr(mp.current_process(), "_inheriting", False):
        script = getattr(sys.modules.get("__mp_main__"), "__file__", None) or "the main script"
        raise RuntimeError(f"{what} started while multiprocessing re-imported {script} in a worker process: the "
                           f"script runs it at import time and would launch it again in every worker; "
                           f"{MAIN_GUARD_FIX}")


def _failure(kind: str, reason: str) -> Any:
    """What a task returns when its worker timed out or died: verifiers never raise."""
    return StepVerdict.unverifiable(reason)


def _resolve(kind: str) -> Callable[[Any], Any]:
    module, _, name = TASKS.get(kind, kind).partition(":")
    return getattr(importlib.import_module(module), name)


_IN_WORKER = False  # set in worker processes: tasks there run in-process, under the parent's timeout


def in_worker() -> bool:
    """True inside a pool worker (so a task must not send work back to the pool)."""
    return _IN_WORKER


def _address_space() -> int:
    """This process's virtual memory size in bytes (0 where ``/proc`` is missing: the limit is then absolute)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _worker_main(conn: Connection, memory_limit_mb: int | None) -> None:
    global _IN_WORKER
    _IN_WORKER = True
    if memory_limit_mb is not None:
        import resource

        # A budget on top of what the worker inherited: the forkserver re-imports the caller's main script, and
        # one that imports torch leaves each worker at ~2.6 GB of address space before its first item.
        limit = _address_space() + memory_limit_mb * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        kind, items = message
        try:
            fn = _resolve(kind)
        except Exception as exc:
            fn = None
            error = f"task {kind!r} unavailable: {exc}"
        conn.send(("ready", None))
        for item in items:
            if fn is None:
                conn.send(("error", error))
                continue
            try:
                conn.send(("ok", fn(item)))
            except BaseException as exc:  # MemoryError, RecursionError: report, keep serving
                conn.send(("error", f"{type(exc).__name__}: {exc}"[:500]))


@contextlib.contextmanager
def _no_phantom_main() -> Iterator[None]:
    """Hide ``__main__.__file__`` while starting a worker when it names no file (stdin, ``python -c``,
    notebooks): forkserver/spawn children re-import it by path and would die before serving."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    phantom = path is not None and getattr(main, "__spec__", None) is None and not os.path.isfile(path)
    if phantom:
        del main.__file__
    try:
        yield
    finally:
        if phantom:
            main.__file__ = path


class _Worker:
    def __init__(self, ctx: Any, memory_limit_mb: int | None) -> None:
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker_main, args=(child, memory_limit_mb), daemon=True)
        with _no_phantom_main():
            self.proc.start()
        child.close()

    def kill(self) -> None:
        self.proc.kill()
        self.proc.join(timeout=5)
        self.conn.close()

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            self.conn.send(None)
        self.proc.join(timeout=1)
        if self.proc.is_alive():
            self.kill()
        else:
            self.conn.close()


@dataclass
class _Job:
    worker: _Worker
    indices: list[int]
    done: int = 0
    ready: bool = False
    since: float = 0.0  # when the current item (or the import) started


class VerifierPool:
    """Worker processes that run verifier tasks with a hard per-item time limit.

    >>> with VerifierPool(PoolConfig(workers=1)) as pool:
    ...     [v.status for v in pool.run("arithmetic", ["2+2=4", "2+2=5", "hello"])]
    ['correct', 'incorrect', 'unverifiable']
    """

    def __init__(self, config: PoolConfig | None = None) -> None:
        refuse_reimported_main("a verifier pool")
        self.config = config or PoolConfig()
        self._ctx = mp.get_context(self.config.start_method)
        self._workers: list[_Worker] = []
        self._lock = threading.Lock()
        self.replaced = 0  # workers killed for a timeout or crash, for metrics

    def __enter__(self) -> VerifierPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            for worker in self._workers:
                worker.stop()
            self._workers = []

    def _spawn(self) -> _Worker:
        return _Worker(self._ctx, self.config.memory_limit_mb)

    def run(self, kind: str, items: Sequence[Any], timeout_s: float = DEFAULT_STEP_TIMEOUT_S) -> list[Any]:
        """Results of task ``kind`` on each item, in order; a timed-out or crashed item gets the failure
        value and the batch continues."""
        if timeout_s <= 0:
            raise ValueError(f"timeout_s must be > 0 seconds, got {timeout_s}")
        results: list[Any] = [None] * len(items)
        size = max(1, min(self.config.chunk_size, -(-len(items) // self.config.workers)))
        pending = deque(list(range(i, min(i + size, len(items)))) for i in range(0, len(items), size))
        with self._lock:
            while len(self._workers) < self.config.workers:
                self._workers.append(self._spawn())
            idle = list(self._workers)
            busy: dict[Connection, _Job] = {}
            while pending or busy:
                while idle and pending:
                    worker, indices = idle.pop(), pending.popleft()
                    worker.conn.send((kind, [items[i] for i in indices]))
                    busy[worker.conn] = _Job(worker, indices, since=time.monotonic())
                now = time.monotonic()
                deadlines = [j.since + (timeout_s if j.ready else _IMPORT_TIMEOUT_S) for j in busy.values()]
                for conn in wait(list(busy), timeout=max(0.0, min(deadlines) - now)):
                    job = busy[conn]
                    try:
                        while conn.poll():
                            tag, payload = conn.recv()
                            job.since = time.monotonic()
                            if tag == "ready":
                                job.ready = True
                                continue
                            index = job.indices[job.done]
                            results[index] = payload if tag == "ok" else _failure(kind, payload)
                            job.done += 1
                    except (EOFError, OSError):
                        self._retire(job, kind, results, pending, busy, "worker crashed")
                        idle.append(self._workers[-1])
                        continue
                    if job.done == len(job.indices):
                        del busy[conn]
                        idle.append(job.worker)
                now = time.monotonic()
                for job in list(busy.values()):
                    if now - job.since > (timeout_s if job.ready else _IMPORT_TIMEOUT_S):
                        self._retire(job, kind, results, pending, busy, f"timed out after {timeout_s:g} s")
                        idle.append(self._workers[-1])
        return results

    def _retire(self, job: _Job, kind: str, results: list[Any], pending: deque[list[int]],
                busy: dict[Connection, _Job], reason: str) -> None:  # fmt: skip
        """Kill a hung or dead worker, fail its current item, requeue the rest, start a replacement."""
        del busy[job.worker.conn]
        job.worker.kill()
        self._workers.remove(job.worker)
        self._workers.append(self._spawn())
        self.replaced += 1
        if not job.ready and reason == "worker crashed":  # died before serving: the environment, not a row
            for worker in self._workers:
                worker.kill()
            self._workers = []
            raise RuntimeError(f"a verifier pool worker ({self.config.start_method}) exited before serving any item, "
                               f"so nothing can be verified. The usual cause: the main script runs at import time; "
                               f"{MAIN_GUARD_FIX}. Otherwise read the worker's traceback above on stderr")
        if not job.ready:  # hung while importing its task: a startup fault, not a hostile row
            for index in job.indices:
                results[index] = _failure(kind, f"worker failed to start: {reason}")
        elif job.done < len(job.indices):
            results[job.indices[job.done]] = _failure(kind, reason)
            rest = job.indices[job.done + 1 :]
            if rest:
                pending.appendleft(rest)


_DEFAULT: VerifierPool | None = None
_DEFAULT_LOCK = threading.Lock()


def get_pool() -> VerifierPool:
    """The process-wide pool (created on first use, closed at exit)."""
    global _DEFAULT
    with _DEFAULT_LOCK:
        if _DEFAULT is None:
            _DEFAULT = VerifierPool()
            atexit.register(_DEFAULT.close)
        return _DEFAULT


def check_steps(texts: Sequence[str], timeout_s: float = DEFAULT_STEP_TIMEOUT_S,
                kind: str = "arithmetic") -> list[StepVerdict]:  # fmt: skip
    """Check a batch of steps in the shared pool; ``kind`` is ``"arithmetic"`` or ``"logic"``.

    >>> [v.status for v in check_steps(["48/2 = <<48/2=24>>24", "3*4 = 13"])]
    ['correct', 'incorrect']
    """
    return get_pool().run(kind, list(texts), timeout_s)
