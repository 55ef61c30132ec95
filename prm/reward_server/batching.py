"""Dynamic batching: items submitted one at a time from many requests are run together, in one worker thread.

A request handler calls :meth:`DynamicBatcher.submit` (or awaits :meth:`DynamicBatcher.submit_async` on an
event loop) and gets its own result back; the worker thread takes the first waiting item, gathers more
until it holds ``max_batch`` items or ``max_wait_ms`` has passed since it took the first, and calls the
batch function once on all of them. While the function runs, new items queue up, so under load every
batch after the first starts full without waiting: the wait only costs latency when the server is idle.

The batch function runs off the event loop, so health checks and request parsing stay responsive while
the model works. One bad item never sinks its batch: when the function raises, the batch is split in
halves and each half retried, so only the failing items get the exception (``log2(batch)`` extra calls
per bad item, not one call per item).
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Generic, TypeVar

__all__ = ["BatchStats", "BatchingConfig", "DynamicBatcher"]

logger = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class BatchingConfig:
    """Size and latency bounds of a batch.

    >>> BatchingConfig(max_batch=0)
    Traceback (most recent call last):
    ...
    ValueError: max_batch=0 must be >= 1 (1 turns batching off: every item runs alone)
    """

    # Items per call of the batch function: 64 completions of a few hundred tokens fill a 7B PRM forward pass
    # on one 80 GB GPU without running out of memory; a tiny CPU model gains little beyond ~32.
    max_batch: int = 64
    # How long the first item of a batch waits for company. 10 ms is small next to a PRM forward pass (tens
    # of ms on GPU for a 7B model, more on CPU) and next to an RL step (seconds), so an idle server adds
    # little latency, while requests that arrive within it share one forward pass.
    max_wait_ms: float = 10.0

    def __post_init__(self) -> None:
        if self.max_batch < 1:
            raise ValueError(f"max_batch={self.max_batch} must be >= 1 (1 turns batching off: every item runs alone)")
        if self.max_wait_ms < 0:
            raise ValueError(f"max_wait_ms={self.max_wait_ms} must be >= 0 (0 runs whatever is queued at once)")


@dataclass
class BatchStats:
    """Counters of a batcher, read by ``/health`` and by the tests that check batching batches."""

    items: int = 0  # items that went through the batch function (retries of a failed batch not counted twice)
    batches: int = 0  # batches formed (each is one call of the batch function, plus retries when it raised)
    calls: int = 0  # calls of the batch function, retries of failed batches included
    failed_items: int = 0  # items that got an exception back
    largest_batch: int = 0
    sizes: list[int] = field(default_factory=list)  # size of every batch, in order (tests and benchmarks read it)

    def as_dict(self) -> dict[str, int | float]:
        mean = self.items / self.batches if self.batches else 0.0
        return {"items": self.items, "batches": self.batches, "calls": self.calls, "failed_items": self.failed_items,
                "largest_batch": self.largest_batch, "mean_batch": round(mean, 2)}


_STOP = object()
_MAX_SIZES_KEPT = 10_000  # a long-running server keeps a bounded history of batch sizes


class DynamicBatcher(Generic[T, R]):
    """Run ``fn(items) -> results`` (one result per item, in order) over batches of submitted items.

    ``setup``, when given, runs first in the worker thread (load a model there, so a slow load never blocks
    the caller); its exception is handed to every item, pending and future, and kept in :attr:`error`.

    >>> with DynamicBatcher(lambda xs: [x * 2 for x in xs], BatchingConfig(max_batch=4)) as b:
    ...     [b.submit(i).result() for i in range(3)]
    [0, 2, 4]
    """

    def __init__(self, fn: Callable[[list[T]], Sequence[R]], config: BatchingConfig | None = None, *,
                 setup: Callable[[], None] | None = None, name: str = "batcher") -> None:
        self.fn, self.config = fn, config or BatchingConfig()
        self.stats = BatchStats()
        self.error: BaseException | None = None
        self._setup = setup
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._started = False
        self._stopped = False

    # ---- lifecycle -------------------------------------------------------------------------------------
    def start(self) -> DynamicBatcher[T, R]:
        if not self._started:
            self._started = True
            self._thread.start()
        return self

    def stop(self, timeout: float | None = 10.0) -> None:
        """Finish the items already queued, then end the worker thread."""
        if self._started and not self._stopped:
            self._stopped = True
            self._queue.put(_STOP)
            self._thread.join(timeout)

    def __enter__(self) -> DynamicBatcher[T, R]:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def ready(self) -> bool:
        """Setup finished without an error (the model is loaded)."""
        return self._ready.is_set() and self.error is None

    def wait_ready(self, timeout: float | None = None) -> bool:
        """Block until setup finished (either way); True when it succeeded."""
        self._ready.wait(timeout)
        return self.ready

    # ---- submitting ------------------------------------------------------------------------------------
    def submit(self, item: T) -> Future[R]:
        """Queue ``item``; the future resolves to its result or raises its exception."""
        future: Future[R] = Future()
        if self._stopped:
            future.set_exception(RuntimeError("the batcher is stopped; start a new one"))
        elif self.error is not None:
            future.set_exception(self.error)
        else:
            self._queue.put((item, future))
        return future

    async def submit_async(self, item: T) -> R:
        """:meth:`submit` for a coroutine: awaits the result without blocking the event loop."""
        return await asyncio.wrap_future(self.submit(item))

    # ---- worker thread ---------------------------------------------------------------------------------
    def _run(self) -> None:
        try:
            if self._setup is not None:
                self._setup()
        except BaseException as err:  # handed to every caller: the server reports it on /ready
            logger.exception("batcher setup failed")
            self.error = err
        finally:
            self._ready.set()
        while True:
            batch, stop = self._gather()
            if batch:
                self._process(batch)
            if stop:
                return

    def _gather(self) -> tuple[list[tuple[T, Future[R]]], bool]:
        first = self._queue.get()
        if first is _STOP:
            return [], True
        batch = [first]
        deadline = time.monotonic() + self.config.max_wait_ms / 1000
        while len(batch) < self.config.max_batch:
            try:  # what is already queued joins at once; then wait for more until the deadline
                nxt = self._queue.get_nowait()
            except queue.Empty:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                try:
                    nxt = self._queue.get(timeout=left)
                except queue.Empty:
                    break
            if nxt is _STOP:
                return batch, True
            batch.append(nxt)
        return batch, False

    def _process(self, batch: list[tuple[T, Future[R]]]) -> None:
        live = [(item, fut) for item, fut in batch if fut.set_running_or_notify_cancel()]
        if not live:
            return
        if self.error is not None:  # setup failed: nothing can run
            for _, fut in live:
                fut.set_exception(self.error)
            return
        stats = self.stats
        stats.items += len(live)
        stats.batches += 1
        stats.largest_batch = max(stats.largest_batch, len(live))
        if len(stats.sizes) < _MAX_SIZES_KEPT:
            stats.sizes.append(len(live))
        self._run_isolating(live)

    def _run_isolating(self, batch: list[tuple[T, Future[R]]]) -> None:
        """Run the batch; if ``fn`` raises, retry halves until each exception sits on the items that cause it."""
        self.stats.calls += 1
        try:
            results = list(self.fn([item for item, _ in batch]))
            if len(results) != len(batch):
                raise RuntimeError(f"the batch function returned {len(results)} results for {len(batch)} items")
        except Exception as err:
            if len(batch) == 1:
                self.stats.failed_items += 1
                batch[0][1].set_exception(err)
                return
            mid = len(batch) // 2
            self._run_isolating(batch[:mid])
            self._run_isolating(batch[mid:])
            return
        for (_, fut), result in zip(batch, results, strict=True):
            fut.set_result(result)
