"""The cross-host lock (warehouse/lease.py): a Delta lock table changed by compare-and-swap, on a local folder
and on a real S3-compatible server (moto) on 127.0.0.1."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pyarrow.fs as pafs
import pytest

from tests.s3_server import env_for
from warehouse import Warehouse
from warehouse.lease import Holder, LockLost, LockTimeout, lease, swap

_HOLD = textwrap.dedent("""
    import sys
    from warehouse.lease import lease
    with lease(sys.argv[1], lease_s=float(sys.argv[2])):
        print("held", flush=True)
        sys.stdin.readline()  # until the test lets go (a line or a closed stdin)
""")
GUARD_S = 120  # only so that a hung lock fails the test; never the asserted outcome


def _hold(uri: str, lease_s: float) -> subprocess.Popen:
    """A process that takes the lease (it has it once this returns) and holds it until its stdin closes."""
    proc = subprocess.Popen([sys.executable, "-c", _HOLD, uri, str(lease_s)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert proc.stdout.readline().strip() == b"held"
    return proc


def _row(uri: str) -> Holder:
    """The lock table's row as it is now (a swap that is never allowed only reads)."""
    return swap(uri, lambda h: False, Holder())[1]


def test_a_held_lease_makes_others_wait_then_time_out_naming_the_holder(tmp_path: Path) -> None:
    uri = str(tmp_path / "lock")
    holder = _hold(uri, lease_s=600)
    try:
        with pytest.raises(LockTimeout, match=rf"still held by \S+:{holder.pid} \(lease ends in"), \
                lease(uri, wait_s=1.0, poll_s=0.2):
            pass
    finally:
        holder.kill()
        holder.wait()


def test_a_killed_holders_lease_is_taken_over_once_it_runs_out(tmp_path: Path, caplog) -> None:
    uri = str(tmp_path / "lock")
    holder = _hold(uri, lease_s=3)
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    dead = _row(uri)  # the dead holder's last word: its lease ends at dead.expires_at
    assert dead.owner.endswith(f":{holder.pid}")
    with caplog.at_level(logging.WARNING, logger="warehouse.lease"), lease(uri, wait_s=GUARD_S, poll_s=0.2):
        taken_at = time.time()
        assert _row(uri).token not in ("", dead.token)
    assert taken_at > dead.expires_at  # not before the dead holder's lease ran out
    assert f"took over the lease of {dead.owner}, which ran out" in caplog.text
    assert _row(uri).token == ""  # given back at the end of the block


def test_a_live_holder_renews_its_lease_past_lease_s(tmp_path: Path) -> None:
    uri = str(tmp_path / "lock")
    holder = _hold(uri, lease_s=6)  # renews every 2 s: 4 s of slack for a loaded machine
    try:
        first = _row(uri)
        deadline = time.monotonic() + GUARD_S
        while time.time() <= first.expires_at:  # until the lease it took has run out: only renewal holds it now
            assert time.monotonic() < deadline and holder.poll() is None
            time.sleep(0.2)
        now = _row(uri)
        assert now.token == first.token and now.expires_at > first.expires_at  # renewed, by the same holder
        with pytest.raises(LockTimeout), lease(uri, wait_s=1.0, poll_s=0.2):
            pass
    finally:
        holder.stdin.close()
        assert holder.wait(timeout=GUARD_S) == 0  # let go without LockLost: nobody took the lease meanwhile


def test_a_lease_taken_away_while_held_raises_lock_lost(tmp_path: Path) -> None:
    uri = str(tmp_path / "lock")
    with pytest.raises(LockLost, match="thief"), lease(uri, lease_s=60):
        # As if the lease had run out and another process had taken it.
        assert swap(uri, lambda h: True, Holder("other", "thief", time.time() + 60))[0]


def test_an_error_inside_the_block_gives_the_lease_back(tmp_path: Path) -> None:
    uri = str(tmp_path / "lock")
    with pytest.raises(ZeroDivisionError), lease(uri):
        1 / 0  # noqa: B018
    with lease(uri, wait_s=0.0):
        pass


_COUNT = textwrap.dedent("""
    import sys, time
    import pyarrow.fs as pafs
    from warehouse import Warehouse
    root, counter, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    fs, path = pafs.FileSystem.from_uri(counter)
    for _ in range(rounds):
        with Warehouse(root).table_lock("problems"):
            with fs.open_input_stream(path) as f:
                value = int(f.read())
            time.sleep(0.05)  # widen the read-modify-write window
            with fs.open_output_stream(path) as f:
                f.write(str(value + 1).encode())
""")


def test_table_lock_on_s3_excludes_processes_that_share_no_disk(s3_root: str, s3_endpoint: str,
                                                                  tmp_path: Path) -> None:
    """Each process has its own home and cache folder (as pods on different hosts): only the lease in the
    bucket orders them. Unlocked, the read-modify-write rounds lose increments."""
    counter = s3_root.rsplit("/", 1)[0] + "/counter"
    fs, path = pafs.FileSystem.from_uri(counter)
    with fs.open_output_stream(path) as f:
        f.write(b"0")
    procs, rounds = [], 8
    for i in range(3):
        home = tmp_path / f"host{i}"
        home.mkdir()
        env = {**env_for(s3_endpoint), "HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache"),
               "PYTHONPATH": os.pathsep.join(sys.path)}
        procs.append(subprocess.Popen([sys.executable, "-c", _COUNT, s3_root, counter, str(rounds)], env=env,
                                      stderr=subprocess.PIPE, text=True))
    for proc in procs:
        assert proc.wait(timeout=600) == 0, proc.stderr.read()
    with fs.open_input_stream(path) as f:
        assert int(f.read()) == 3 * rounds
    assert Warehouse(s3_root).files("problems") == []  # the lock table is not a warehouse table


def test_the_lock_tables_log_is_checkpointed_as_it_grows(tmp_path: Path) -> None:
    uri = tmp_path / "lock"
    for _ in range(5):  # created at version 0, then a take and a give-back each: 11 commits, one checkpoint
        with lease(str(uri)):
            pass
    assert (uri / "_delta_log" / "_last_checkpoint").exists()
