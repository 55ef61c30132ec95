"""The dynamic batcher on its own: size bound, latency bound, failure isolation, setup errors."""

from __future__ import annotations

import threading
import time

import pytest

from prm.reward_server.batching import BatchingConfig, DynamicBatcher

GUARD_S = 60  # a result not there by then is a hang (a batch that never closes), never a slow machine


def test_size_bound_splits_a_backlog_into_full_batches():
    seen: list[list[int]] = []
    gate = threading.Event()

    def fn(items):
        gate.wait(GUARD_S)
        seen.append(list(items))
        return [x * 10 for x in items]

    batcher = DynamicBatcher(fn, BatchingConfig(max_batch=4, max_wait_ms=0))
    futures = [batcher.submit(i) for i in range(10)]  # queued before the worker starts: a backlog
    with batcher.start():
        gate.set()
        assert [f.result(GUARD_S) for f in futures] == [x * 10 for x in range(10)]
    assert seen == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert batcher.stats.as_dict()["batches"] == 3 and batcher.stats.largest_batch == 4


def test_latency_bound_runs_a_lone_item_without_a_full_batch():
    with DynamicBatcher(lambda xs: list(xs), BatchingConfig(max_batch=64, max_wait_ms=20)) as batcher:
        # Answered while the batcher still runs (stopping would flush the batch): only the latency bound can have
        # closed a batch of 1 under max_batch=64. The timeout only keeps a batch that never closes from hanging.
        assert batcher.submit("alone").result(GUARD_S) == "alone"
        assert batcher.stats.sizes == [1]


def _until_taken(batcher: DynamicBatcher) -> None:
    """Wait until the worker has taken everything submitted (it then waits for company or runs the batch)."""
    deadline = time.monotonic() + GUARD_S  # only guards against a hang; the outcome is the event
    while not batcher._queue.empty():
        assert time.monotonic() < deadline, "the worker never took the queued item"
        time.sleep(0.001)


def test_items_arriving_within_the_wait_share_a_batch():
    # A wait far longer than the test: the batch closes when the fifth item makes it full, never on the clock.
    with DynamicBatcher(lambda xs: list(xs), BatchingConfig(max_batch=5, max_wait_ms=1000 * GUARD_S)) as batcher:
        futures = [batcher.submit(0)]
        _until_taken(batcher)  # the first item is in the worker's hands, waiting: the rest arrive during its wait
        futures += [batcher.submit(i) for i in range(1, 5)]
        assert [f.result(GUARD_S) for f in futures] == list(range(5))
        assert batcher.stats.sizes == [5]


def test_a_failing_item_gets_the_exception_and_its_batch_mates_their_results():
    def fn(items):
        if any(x < 0 for x in items):
            raise ValueError(f"negative in {items}")
        return [x + 1 for x in items]

    batcher = DynamicBatcher(fn, BatchingConfig(max_batch=8, max_wait_ms=0))
    futures = [batcher.submit(x) for x in (1, 2, -3, 4, 5, 6, 7, 8)]
    with batcher.start():
        for x, fut in zip((1, 2, -3, 4, 5, 6, 7, 8), futures, strict=True):
            if x < 0:
                with pytest.raises(ValueError, match=r"negative in \[-3\]"):
                    fut.result(GUARD_S)
            else:
                assert fut.result(GUARD_S) == x + 1
    stats = batcher.stats
    assert (stats.batches, stats.items, stats.failed_items) == (1, 8, 1)
    assert stats.calls == 7  # 8 -> 4 + 4 -> (2 + 2) -> (1 + 1): one failing path of log2(8) halvings, 7 calls


def test_a_wrong_result_count_is_an_error_not_a_misaligned_answer():
    batcher = DynamicBatcher(lambda xs: [0], BatchingConfig(max_batch=2, max_wait_ms=0))
    futures = [batcher.submit(i) for i in range(2)]  # queued before the worker starts: one batch of 2
    with batcher.start():
        results = [f.result(GUARD_S) for f in futures]  # halves of one item each return one result: aligned again
    assert results == [0, 0] and batcher.stats.sizes == [2] and batcher.stats.calls == 3


def test_setup_error_reaches_every_caller_and_ready_says_so():
    def broken():
        raise OSError("no weights in /nowhere")

    with DynamicBatcher(lambda xs: list(xs), setup=broken) as batcher:
        assert batcher.wait_ready(5) is False
        assert isinstance(batcher.error, OSError)
        with pytest.raises(OSError, match="no weights"):
            batcher.submit(1).result(GUARD_S)


def test_items_submitted_after_stop_fail_with_a_message():
    batcher = DynamicBatcher(lambda xs: list(xs)).start()
    batcher.stop()
    with pytest.raises(RuntimeError, match="batcher is stopped"):
        batcher.submit(1).result(GUARD_S)


@pytest.mark.parametrize("kwargs,match", [({"max_batch": 0}, "max_batch=0"), ({"max_wait_ms": -1}, "max_wait_ms=-1")])
def test_config_rejects_bounds_that_cannot_work(kwargs, match):
    with pytest.raises(ValueError, match=match):
        BatchingConfig(**kwargs)
