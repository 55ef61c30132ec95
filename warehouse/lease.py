"""A lock that holds across hosts on an object store: a one-row Delta table changed by compare-and-swap.

``Warehouse.table_lock`` uses it for an ``s3://`` root, where runs in different pods share no disk to
``flock`` on. The row names the holder and when its lease ends. Every change (take, renew, give back) is a
whole-table overwrite based on the version just read. Two overwrites based on the same version conflict in
Delta's commit protocol (put-if-absent of the next log entry), so one wins and the other re-reads: at most one
process holds the lease. The holder renews it from a background thread every third of ``lease_s``. A holder
that died is taken over once its lease has run out. Expiry uses each host's wall clock, so hosts' clocks must
agree to well within ``lease_s`` (NTP does).
"""

from __future__ import annotations

import contextlib
import logging
import os
import random
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pyarrow as pa
from deltalake import DeltaTable, write_deltalake
from deltalake.exceptions import CommitFailedError, DeltaError, TableNotFoundError

from warehouse.constants import COMMIT_ATTEMPTS
from warehouse.location import storage_options

log = logging.getLogger(__name__)

# A holder that stops renewing (killed, partitioned away) blocks others this long at most.
LEASE_S = 300.0
# Seconds between looks at a held lease: a commit on S3 costs ~0.1 s, so this keeps waiters cheap.
POLL_S = 1.0
# How long a caller waits for a held lease before giving up with LockTimeout.
WAIT_S = 1800.0
# On release, about once every this many versions, the files the lock table's swaps replaced are deleted.
VACUUM_EVERY = 100

# delta-rs checkpoints the log every 10 commits (an open reads the checkpoint and every later log entry: on S3
# a GET each; the default is 100) and then deletes entries older than a day (the default keeps 30 days).
_CONFIGURATION = {"delta.checkpointInterval": "10", "delta.logRetentionDuration": "interval 1 day"}
_SCHEMA = pa.schema([("token", pa.string()), ("owner", pa.string()), ("expires_at", pa.float64())])


class LockTimeout(TimeoutError):
    """The lease stayed held by another process for the whole wait."""


class LockLost(RuntimeError):
    """The lease ran out while held (renewal failed for ``lease_s``) and another process took it."""


@dataclass(frozen=True)
class Holder:
    """The lock table's row: who holds the lease (``token`` empty: nobody) and until when (epoch seconds)."""

    token: str = ""
    owner: str = ""
    expires_at: float = 0.0

    def free(self, now: float) -> bool:
        return not self.token or self.expires_at < now

    def describe(self) -> str:
        left = self.expires_at - time.time()
        return f"{self.owner} (lease ends in {left:.0f} s)" if self.token else "nobody"


# One handle per lock table and process (keyed by pid: a forked child must not share its parent's): a look at
# the table then reads only the log entries newer than the last look.
_handles: dict[tuple[int, str], DeltaTable] = {}
_handles_lock = threading.Lock()


def _table(uri: str) -> DeltaTable:
    """The lock table at ``uri`` brought up to date, created free on first use (a creation race is harmless)."""
    with _handles_lock:
        key = (os.getpid(), uri)
        table = _handles.get(key)
        if table is not None:
            table.update_incremental()
            return table
        options = storage_options(uri)
        for _ in range(5):
            try:
                table = DeltaTable(uri, storage_options=options)
                break
            except TableNotFoundError:
                with contextlib.suppress(DeltaError):  # raised when another process created it first
                    write_deltalake(uri, _row(Holder()), mode="error", storage_options=options,
                                    configuration=_CONFIGURATION)
        else:
            table = DeltaTable(uri, storage_options=options)
        _handles[key] = table
        return table


def _row(holder: Holder) -> pa.Table:
    return pa.Table.from_pylist([holder.__dict__], schema=_SCHEMA)


def _current(table: DeltaTable) -> Holder:
    """The holder named by the table. Two processes creating the table at once leave two free rows (delta-rs
    commits the loser's creation as an append); the first swap replaces them with one."""
    rows = table.to_pyarrow_table().to_pylist()
    taken = [row for row in rows if row["token"]]
    if not rows or len(taken) > 1:
        raise RuntimeError(f"lock table {table.table_uri} holds {len(rows)} rows, {len(taken)} of them taken, "
                           "where one is expected: delete the folder while no run uses it, and it is made again")
    return Holder(**taken[0]) if taken else Holder()


def swap(uri: str, allowed: Callable[[Holder], bool], new: Holder) -> tuple[bool, Holder]:
    """Replace the row with ``new`` if ``allowed(current row)``; returns (swapped, the row it saw).

    A concurrent change makes the commit fail; the row is then read again and the test repeated."""
    for _ in range(COMMIT_ATTEMPTS):
        table = _table(uri)
        seen = _current(table)
        if not allowed(seen):
            return False, seen
        try:
            write_deltalake(table, _row(new), mode="overwrite")
            return True, seen
        except CommitFailedError:
            time.sleep(random.uniform(0.0, 0.05))
    raise RuntimeError(f"lock {uri}: {COMMIT_ATTEMPTS} changes in a row lost to concurrent ones; too many "
                       "processes contend for this lock")


def _tidy(uri: str) -> None:
    """Now and then delete the files the lock table's swaps replaced over an hour ago (no reader is that slow)."""
    table = _table(uri)
    if table.version() % VACUUM_EVERY >= 3:  # a hold is 2-3 commits or more: one of each 100 lands here
        return
    try:
        table.vacuum(retention_hours=1, dry_run=False, enforce_retention_duration=False)
    except (DeltaError, OSError) as exc:  # tidying is housekeeping: the lock itself is unaffected
        log.warning("could not tidy the lock table %s: %s", uri, exc)


@contextmanager
def lease(uri: str, *, lease_s: float = LEASE_S, wait_s: float = WAIT_S, poll_s: float = POLL_S) -> Iterator[None]:
    """Hold the lease of the lock table at ``uri`` for the block: waits while another process holds it."""
    token, owner = uuid.uuid4().hex, f"{socket.gethostname()}:{os.getpid()}"
    deadline, waiting_for = time.monotonic() + wait_s, None
    while True:
        took, seen = swap(uri, lambda h: h.free(time.time()), Holder(token, owner, time.time() + lease_s))
        if took:
            break
        if time.monotonic() > deadline:
            raise LockTimeout(f"lock {uri} is still held by {seen.describe()} after waiting {wait_s:g} s; if "
                              "that run is gone, its lease ends on its own, else wait for it to finish")
        if seen.token != waiting_for:  # once per holder: a log line a second would bury the run's log
            log.info("lock %s is held by %s; waiting (at most %g s)", uri, seen.describe(), wait_s)
            waiting_for = seen.token
        time.sleep(poll_s * random.uniform(0.5, 1.5))
    if seen.token:
        log.warning("lock %s: took over the lease of %s, which ran out", uri, seen.owner)
    stop, lost = threading.Event(), []

    def renew() -> None:
        while not stop.wait(lease_s / 3):
            try:
                ok, holder = swap(uri, lambda h: h.token == token, Holder(token, owner, time.time() + lease_s))
            except (DeltaError, OSError) as exc:  # the store is unreachable: try again, the lease still runs
                log.warning("lock %s: renewing the lease failed: %s", uri, exc)
                continue
            if not ok:
                lost.append(holder)
                return

    renewer = threading.Thread(target=renew, name=f"lease-renewal {uri}", daemon=True)
    renewer.start()
    try:
        yield
    finally:
        stop.set()
        renewer.join()
        released, holder = swap(uri, lambda h: h.token == token, Holder())
    if lost or not released:
        raise LockLost(f"lock {uri}: the lease ran out while this process held it and {holder.describe()} "
                       "took it, so the work done under it may have interleaved with another run's; check "
                       "its result (e.g. the warehouse's unique-id checks) and raise the lease if renewing "
                       "is this slow")
    _tidy(uri)
