"""Replace and cleanup with real processes: concurrent replacing writers, kills mid-replace, stale temp files.

The child processes hook ``os.replace`` (and ``fcntl.flock``) to stop at exact points of a write, so
each interleaving is forced rather than hoped for; nothing here depends on timing.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from warehouse import Warehouse, connect
from warehouse.commit import temp_path

DAY = "2026-11-20"

# argv: root, this writer's name, the other writer's name, a folder for the two to signal through.
# Each replaces the same partition with its own rows. After putting its file in place, a writer waits
# until the other has put its file in place too, or is waiting for the partition lock: without a lock
# both then delete each other's file; with one, the second writer is held until the first is done.
_RACER = textwrap.dedent(
    """
    import fcntl, os, sys, time
    from pathlib import Path
    from warehouse import Warehouse

    root, me, other, sync = sys.argv[1], sys.argv[2], sys.argv[3], Path(sys.argv[4])
    real_replace, real_flock = os.replace, fcntl.flock

    def flock(fd, op):
        (sync / f"{me}.locking").touch()
        return real_flock(fd, op)

    def replace(src, dst):
        real_replace(src, dst)
        if Path(dst).name.startswith("part-"):
            (sync / f"{me}.published").touch()
            while not ((sync / f"{other}.published").exists() or (sync / f"{other}.locking").exists()):
                time.sleep(0.01)

    fcntl.flock, os.replace = flock, replace  # before the open: its cleanup may wait for the other's lock too
    rows = [{"problem_id": f"{me}{i}", "task": "t", "split": "s", "question": me, "gold_answer": "1"}
            for i in range(50)]
    Warehouse(root).write("problems", rows, source="arith", day=sys.argv[5], writer="problems", replace=True)
    """
)

# argv: root, day, the name a file must start with for the writer to die right after renaming it.
_KILLED_REPLACE = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    from warehouse import Warehouse

    real_replace = os.replace

    def replace(src, dst):
        real_replace(src, dst)
        if Path(dst).name.startswith(sys.argv[3]):
            os.kill(os.getpid(), signal.SIGKILL)

    os.replace = replace
    rows = [{"problem_id": f"p{i}", "task": "t", "split": "s", "question": "new", "gold_answer": "1"}
            for i in range(10)]
    Warehouse(sys.argv[1]).write("problems", rows, source="arith", day=sys.argv[2], writer="problems", replace=True)
    """
)


def _python(script: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", script, *args],
                            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})


def _rows(wh: Warehouse) -> list[tuple[str, str]]:
    return connect(wh.root).execute("SELECT problem_id, question FROM problems ORDER BY 1").fetchall()


def test_concurrent_replacing_writers_leave_exactly_one_writers_rows(wh: Warehouse, tmp_path: Path) -> None:
    old = [{"problem_id": f"old{i}", "task": "t", "split": "s", "question": "old", "gold_answer": "1"}
           for i in range(5)]
    wh.write("problems", old, source="arith", day=DAY, writer="problems")
    sync = tmp_path / "sync"
    sync.mkdir()
    racers = [_python(_RACER, str(wh.root), me, other, str(sync), DAY) for me, other in (("a", "b"), ("b", "a"))]
    assert [p.wait(timeout=120) for p in racers] == [0, 0]
    questions = {q for _, q in _rows(wh)}
    assert questions in ({"a"}, {"b"}), f"the partition should hold one writer's rows, got {questions or 'none'}"
    assert len(_rows(wh)) == 50


@pytest.mark.parametrize("die_after", ["part-", ".replace-"], ids=["new file in place", "journal written"])
def test_replace_killed_mid_commit_never_shows_duplicate_keys(wh: Warehouse, die_after: str) -> None:
    old = [{"problem_id": f"p{i}", "task": "t", "split": "s", "question": "old", "gold_answer": "1"}
           for i in range(10)]
    wh.write("problems", old, source="arith", day=DAY, writer="problems")
    proc = _python(_KILLED_REPLACE, str(wh.root), DAY, die_after)
    assert proc.wait(timeout=120) == -signal.SIGKILL, "the writer should have died inside the replace"
    # A reader that does no recovery (DuckDB over the files) sees the old rows or the new, never both.
    seen = _rows(wh)
    assert [pid for pid, _ in seen] == [f"p{i}" for i in range(10)]
    assert len({q for _, q in seen}) == 1
    # Opening the warehouse finishes the committed replace: only the new rows, and no journal left.
    reopened = Warehouse(wh.root)
    assert {q for _, q in _rows(reopened)} == {"new"} and len(_rows(reopened)) == 10
    folder = reopened.partition_dir("problems", "arith", DAY)
    assert sorted(p.name for p in folder.iterdir() if p.name.startswith(".")) == [".lock"]


_KILLED_BEFORE_RENAME = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    from warehouse import Warehouse

    real_replace = os.replace

    def replace(src, dst):  # die with the temp file complete, before it is renamed into place
        if Path(dst).name.startswith("part-"):
            os.kill(os.getpid(), signal.SIGKILL)
        real_replace(src, dst)

    os.replace = replace
    Warehouse(sys.argv[1]).write("problems", [{"problem_id": "p", "task": "t", "split": "s", "question": "q",
                                               "gold_answer": "1"}], source="arith", day=sys.argv[2])
    """
)


def test_opening_the_warehouse_removes_temp_files_of_dead_writers_only(wh: Warehouse) -> None:
    assert _python(_KILLED_BEFORE_RENAME, str(wh.root), DAY).wait(timeout=120) == -signal.SIGKILL
    folder = wh.partition_dir("problems", "arith", DAY)
    (dead,) = [p for p in folder.iterdir() if p.name.startswith(".tmp-")]
    live = temp_path(folder / "part-problems-live.parquet")  # named for this (running) process
    live.write_bytes(b"being written")
    Warehouse(wh.root)
    assert not dead.exists(), "the killed writer's temp file should be removed when the warehouse opens"
    assert live.exists(), "a live writer's temp file must stay"
