"""Stopping the processes an engine starts, and reaping them, read from ``/proc``.

A process that exits stays a zombie ("defunct") until its parent waits for it. An engine's own children (vLLM's
engine core, multiprocessing's resource tracker) are children of the worker, not of the caller: if the worker goes
first they are orphaned to PID 1, and under a PID 1 that never reaps (a container's shell or ``sleep``) every one
killed afterwards stays defunct. So the worker stops and reaps its own children before it exits
(:func:`reap_children`), and the owner stops what is left of the worker's process group (:func:`stop_group`) only
for a worker that could not clean up (killed, or stuck in native code).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import time
from collections.abc import Iterator
from multiprocessing import resource_tracker
from pathlib import Path

# How often a wait for processes to exit looks again: short next to the seconds a shutdown may take.
_POLL_S = 0.05


def _proc_table() -> Iterator[tuple[int, str, int, int]]:
    """``(pid, state, ppid, pgrp)`` of every process in ``/proc`` (fields 1, 3, 4 and 5 of proc(5))."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        state, ppid, group = text[text.rindex(")") + 2:].split()[:3]
        yield int(stat.parent.name), state, int(ppid), int(group)


def group_running(pgid: int) -> bool:
    """Whether a process of group ``pgid`` is still running (zombies awaiting their reaper have exited)."""
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    if not Path("/proc/self/stat").exists():  # no /proc (macOS): trust killpg
        return True
    return any(group == pgid and state != "Z" for _, state, _, group in _proc_table())


def stop_group(pgid: int, grace_s: float) -> None:
    """Stop what is left of process group ``pgid``: SIGTERM, then SIGKILL what outlives ``grace_s``.
    multiprocessing's resource_tracker ignores SIGTERM but exits by itself (cleaning up) once the others are gone."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if not group_running(pgid):
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, sig)
        deadline = time.monotonic() + grace_s
        while group_running(pgid) and time.monotonic() < deadline:
            time.sleep(_POLL_S)


def child_pids(pid: int | None = None) -> list[int]:
    """The processes whose parent is ``pid`` (default: this one), zombies included."""
    parent = os.getpid() if pid is None else pid
    if not Path("/proc/self/stat").exists():
        return []
    return [child for child, _, ppid, _ in _proc_table() if ppid == parent]


def reap_children(grace_s: float) -> None:
    """Stop every child of this process and wait for each, so that none outlives it as an orphan: SIGTERM
    (multiprocessing children through their ``terminate``), then SIGKILL whatever has not exited after ``grace_s``.
    multiprocessing's resource tracker is let go instead of signalled: it ignores SIGTERM, and it exits by itself,
    after unlinking the shared memory the engine leaked, once this process's end of its pipe closes."""
    deadline = time.monotonic() + grace_s
    managed = multiprocessing.active_children()
    for child in managed:
        child.terminate()
    _release_resource_tracker()
    known = {child.pid for child in managed}
    others = [pid for pid in child_pids() if pid not in known]
    for pid in others:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    for child in managed:
        child.join(max(0.0, deadline - time.monotonic()))
        if child.exitcode is None:
            child.kill()
            child.join()
    for pid in others:
        if not _waited(pid, deadline):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            _waited(pid, None)


def _waited(pid: int, deadline: float | None) -> bool:
    """Reap child ``pid`` once it exits; False if it is still running at ``deadline`` (None: wait as long as it
    takes)."""
    while True:
        try:
            done, _ = os.waitpid(pid, 0 if deadline is None else os.WNOHANG)
        except ChildProcessError:  # not our child, or already reaped
            return True
        if done:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(_POLL_S)


def _release_resource_tracker() -> None:
    """Close this process's end of multiprocessing's resource-tracker pipe, which tells the tracker to clean up
    and exit. ``_resource_tracker._fd`` is CPython's (3.8 to 3.13); where it is absent the tracker is stopped as any
    other child."""
    tracker = getattr(resource_tracker, "_resource_tracker", None)
    fd = getattr(tracker, "_fd", None)
    if isinstance(fd, int):
        with contextlib.suppress(OSError):
            os.close(fd)
        tracker._fd = None  # so that nothing in this process writes to (or closes) the number again
