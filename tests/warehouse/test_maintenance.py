"""Compaction, vacuum and the log checkpoint: fewer files, the same rows, orphans of killed writers gone."""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import subprocess
import textwrap
import time
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from warehouse import Warehouse, connect
from warehouse.cli import main
from warehouse.delta import VersionVacuumed
from warehouse.maintenance import SAFE_RETENTION_HOURS, UnsafeRetention, maintain

DAY = "2026-11-20"


def _problems(tag: str, n: int = 5) -> list[dict]:
    return [{"problem_id": f"{tag}{i}", "task": "t", "split": "s", "question": tag, "gold_answer": "1"}
            for i in range(n)]


def test_compaction_merges_small_files_and_keeps_every_row(wh: Warehouse) -> None:
    for i in range(6):
        wh.write("problems", _problems(f"a{i}"), source="arith", day=DAY)
    before = connect(wh.root).execute("SELECT * FROM problems ORDER BY problem_id").fetchall()
    (done,) = maintain(wh, tables=["problems"])
    assert (done.files_before, done.files_after, done.files_compacted) == (6, 1, 6)
    assert done.version_after == done.version_before + 1
    assert connect(wh.root).execute("SELECT * FROM problems ORDER BY problem_id").fetchall() == before
    assert wh.read("problems", version=done.version_before).num_rows == 30  # time travel still reaches back


def _age(path: Path, hours: float) -> None:
    """Move ``path``'s modification time ``hours`` back, as if it had been written that long ago."""
    stamp = path.stat().st_mtime - hours * 3600
    os.utime(path, (stamp, stamp))


def test_vacuum_deletes_replaced_files_and_old_orphans_but_never_a_commit_in_flight(wh: Warehouse) -> None:
    wh.write("problems", _problems("a"), source="arith", day=DAY)
    wh.write("problems", _problems("b"), source="arith", day=DAY, replace=True)
    folder = Path(wh.root) / "problems" / "source=arith" / f"day={DAY}" / "writer=problems"
    orphan = folder / "part-00000-killed-before-commit.zstd.parquet"  # written long ago, never committed
    in_flight = folder / "part-00000-about-to-commit.zstd.parquet"  # a running writer's, committed next
    for path in (orphan, in_flight):
        pq.write_table(pa.table({"x": [1]}), path)
    _age(orphan, SAFE_RETENTION_HOURS + 1)
    assert len(list(folder.glob("*.parquet"))) == 4
    assert maintain(wh, retention_hours=0, force=True, dry_run=True)[0].files_vacuumed == 2
    assert len(list(folder.glob("*.parquet"))) == 4  # a dry run changes nothing
    maintain(wh, retention_hours=0, force=True)
    assert not orphan.exists() and in_flight.exists() and len(list(folder.glob("*.parquet"))) == 2
    assert connect(wh.root).execute("SELECT DISTINCT question FROM problems").fetchall() == [("b",)]


def test_a_retention_below_the_floor_is_refused_without_force(wh: Warehouse) -> None:
    wh.write("problems", _problems("a"), source="arith", day=DAY)
    wh.write("problems", _problems("b"), source="arith", day=DAY, replace=True)
    with pytest.raises(UnsafeRetention, match=r"below the safe floor of 1 h: .* or pass force=True"):
        maintain(wh, retention_hours=0)
    out = CliRunner().invoke(main, ["maintain", "--root", wh.root, "--retention-hours", "0"])
    assert out.exit_code == 1 and len(out.output.strip().splitlines()) == 1, out.output
    expected = (r"^Error: --retention-hours 0: a vacuum retention of 0 h is below the safe floor of 1 h: .*files of "
                r"versions that running readers .* - pass --retention-hours 1 or more, or add --force")
    assert re.match(expected, out.output), out.output
    assert wh.read("problems", version=0).num_rows == 5  # nothing was vacuumed
    out = CliRunner().invoke(main, ["maintain", "--root", wh.root, "--retention-hours", "0", "--force"])
    assert out.exit_code == 0 and json.loads(out.output)["files_vacuumed"] == 1


def test_default_retention_keeps_recent_versions_readable(wh: Warehouse) -> None:
    wh.write("problems", _problems("a"), source="arith", day=DAY)
    wh.write("problems", _problems("b"), source="arith", day=DAY, replace=True)
    maintain(wh)  # 168 hours: nothing removed an hour ago may go
    assert wh.read("problems", version=0).column("question").to_pylist() == ["a"] * 5


def test_cli_maintain_history_and_time_travel(wh: Warehouse) -> None:
    wh.write("problems", _problems("a"), source="arith", day=DAY, run_id="run-1")
    wh.write("problems", _problems("b"), source="arith", day=DAY, run_id="run-2", replace=True)
    runner = CliRunner()
    out = runner.invoke(main, ["history", "problems", "--root", wh.root])
    assert out.exit_code == 0 and out.output.splitlines()[0].startswith("v1 ") and "run=run-2" in out.output
    assert "replace" in out.output.splitlines()[0] and "append" in out.output.splitlines()[1]
    out = runner.invoke(main, ["sql", "SELECT DISTINCT question FROM problems", "--root", wh.root,
                               "--version", "problems=0", "--format", "csv"])
    assert out.exit_code == 0 and out.output.split() == ["question", "a"]
    out = runner.invoke(main, ["sql", "SELECT 1", "--root", wh.root, "--version", "problems=x"])
    assert out.exit_code == 1 and "TABLE=N" in out.output
    out = runner.invoke(main, ["sql", "SELECT 1", "--root", wh.root, "--version", "problems=9"])
    assert out.exit_code == 1 and "Error:" in out.output
    wh.write("problems", _problems("c"), source="arith", day=DAY, run_id="run-3")
    out = runner.invoke(main, ["maintain", "--root", wh.root, "--table", "problems"])
    assert out.exit_code == 0 and json.loads(out.output)["files_compacted"] == 2


# argv: root, stop file. Appends to one partition and every third round replaces it, until the stop file exists:
# a compaction of the partition's files loses its commit to a replace that removed them meanwhile.
_REPLACER = textwrap.dedent(
    """
    import os, sys
    from warehouse import Warehouse

    root, stop = sys.argv[1:3]
    wh, r = Warehouse(root), 0
    while not os.path.exists(stop):
        rows = [{"problem_id": f"p{r}-{i}", "task": "t", "split": "s", "question": str(r), "gold_answer": "1"}
                for i in range(5)]
        wh.write("problems", rows, source="arith", day=sys.argv[3], replace=r % 3 == 2)
        r += 1
    """
)


def _retries(caplog: pytest.LogCaptureFixture) -> int:
    return sum("lost to a concurrent commit" in r.getMessage() for r in caplog.records if r.name == "warehouse.delta")


def test_maintain_retries_a_compaction_that_loses_to_a_concurrent_replace(wh: Warehouse, tmp_path: Path, spawn,
                                                                          caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="warehouse.delta")
    wh.write("problems", _problems("a"), source="arith", day=DAY)
    stop = tmp_path / "stop"
    writer = spawn(_REPLACER, wh.root, str(stop), DAY)
    runs = 0
    try:
        while runs < 300 and not _retries(caplog):  # until one conflict happened, and was retried
            maintain(wh, tables=["problems"])
            runs += 1
    finally:
        stop.touch()
        assert writer.wait() == 0
    assert _retries(caplog) >= 1, f"no compaction lost to the writer's replaces in {runs} runs: no race happened"
    rounds = Counter(wh.read("problems").column("question").to_pylist())  # compaction kept every row, once
    first, last = min(map(int, rounds)), max(map(int, rounds))
    assert first % 3 == 2 and rounds == {str(r): 5 for r in range(first, last + 1)}  # since the last replace


# argv: root, stop file, started file, report file. Runs `prm-warehouse maintain --retention-hours 0 --force` until
# the stop file exists; touches the started file after its first run; reports the runs and the failures.
_MAINTAINER = textwrap.dedent(
    """
    import json, os, sys
    from warehouse.cli import main

    root, stop, started, report = sys.argv[1:5]
    runs, failures = 0, []
    while not os.path.exists(stop):
        args = ["maintain", "--root", root, "--table", "problems", "--retention-hours", "0", "--force"]
        try:
            main(args, standalone_mode=False)
        except (Exception, SystemExit) as exc:
            failures.append(repr(exc)[:300])
        runs += 1
        open(started, "w").close()
    open(report, "w").write(json.dumps({"runs": runs, "failures": failures}))
    """
)

# argv: root, batches. Appends batches of 10 rows (ids b<batch>-<i>), one commit each.
_APPENDER = textwrap.dedent(
    """
    import sys
    from warehouse import Warehouse

    wh = Warehouse(sys.argv[1])
    for b in range(int(sys.argv[2])):
        rows = [{"problem_id": f"b{b}-{i}", "task": "t", "split": "s", "question": str(b), "gold_answer": "1"}
                for i in range(10)]
        wh.write("problems", rows, source="arith", day="2026-11-20", writer="appender")
    """
)


def test_a_writer_racing_maintain_with_zero_retention_loses_nothing(wh: Warehouse, tmp_path: Path, spawn) -> None:
    wh.write("problems", _problems("a"), source="arith", day=DAY)
    stop, started, report = tmp_path / "stop", tmp_path / "started", tmp_path / "report"
    maintainer = spawn(_MAINTAINER, wh.root, str(stop), str(started), str(report))
    while not started.exists():  # the writer starts once vacuum runs
        assert maintainer.poll() is None, "the maintainer died before its first run"
        time.sleep(0.05)
    batches = 40
    assert spawn(_APPENDER, wh.root, str(batches)).wait() == 0
    stop.touch()
    assert maintainer.wait() == 0
    done = json.loads(report.read_text())
    assert done["failures"] == [] and done["runs"] >= 2, done
    ids = sorted(wh.read("problems").column("problem_id").to_pylist())  # readable, every committed row there
    assert ids == sorted([f"a{i}" for i in range(5)] + [f"b{b}-{i}" for b in range(batches) for i in range(10)])
    out = CliRunner().invoke(main, ["maintain", "--root", wh.root, "--retention-hours", "0", "--force"])
    assert out.exit_code == 0, out.output


def test_files_vacuumed_counts_each_deleted_file_once(wh: Warehouse) -> None:
    wh.write("problems", _problems("a"), source="arith", day=DAY)
    wh.write("problems", _problems("b"), source="arith", day=DAY, replace=True)
    counts = [maintain(wh, retention_hours=0, force=True)[0].files_vacuumed for _ in range(3)]
    assert counts == [1, 0, 0]  # the replaced file, deleted by the first run; its removal stays in the log


# argv: root. Writes batches large enough that each Parquet file stays staged (``<name>#<n>``) for a while, forever.
_BIG_WRITER = textwrap.dedent(
    """
    import sys
    from warehouse import Warehouse

    n = 100_000
    cols = {"problem_id": [f"p{i}" for i in range(n)], "task": ["t"] * n, "split": ["s"] * n,
            "question": [f"what is {i} " * 12 for i in range(n)], "gold_answer": ["1"] * n}
    wh = Warehouse(sys.argv[1])
    while True:
        wh.write("problems", cols, source="arith", day="2026-11-20", writer="big")
    """
)


def _staged(table: Path) -> set[Path]:
    return {p for p in table.rglob("*#*") if p.is_file()}


def _kill_while_staging(writer: subprocess.Popen, table: Path, stops: int = 200) -> None:
    """Freeze ``writer`` whenever a staging file is there, and SIGKILL it if the file still is once it stands
    still (a kill then always lands mid-write); else let it go on, at most ``stops`` times."""
    for _ in range(stops):
        while not _staged(table):
            assert writer.poll() is None, "the writer died on its own"
        writer.send_signal(signal.SIGSTOP)
        os.waitpid(writer.pid, os.WUNTRACED)  # returns once every thread of it has stopped
        if _staged(table):
            writer.kill()
            writer.wait()
            return
        writer.send_signal(signal.SIGCONT)
    raise AssertionError(f"the writer renamed its staging file before it stopped, {stops} times in a row")


@pytest.mark.slow  # polls a writer in a busy loop: run with the serial slow tests, never beside another worker
def test_maintain_removes_old_staging_files_of_killed_writers(wh: Warehouse, spawn) -> None:
    wh.write("problems", _problems("a"), source="arith", day=DAY)
    table = Path(wh.root) / "problems"
    _kill_while_staging(spawn(_BIG_WRITER, wh.root), table)
    left = _staged(table)
    (done,) = maintain(wh, retention_hours=SAFE_RETENTION_HOURS)
    assert _staged(table) == left and done.files_vacuumed == 0  # young: may be a write in flight
    for path in left:
        _age(path, SAFE_RETENTION_HOURS + 1)
    assert maintain(wh, retention_hours=SAFE_RETENTION_HOURS, dry_run=True)[0].files_vacuumed == len(left)
    assert maintain(wh, retention_hours=SAFE_RETENTION_HOURS)[0].files_vacuumed == len(left)
    assert _staged(table) == set()
    assert maintain(wh, retention_hours=SAFE_RETENTION_HOURS)[0].files_vacuumed == 0
    assert wh.read("problems").num_rows == 5 + 100_000 * sum(
        c.get("writer") == "big" for c in wh.history("problems"))  # every committed write is whole


def test_reading_a_vacuumed_version_says_so_and_names_a_readable_one(wh: Warehouse) -> None:
    for tag in "abc":  # versions 0, 1, 2: each replaces the one before
        wh.write("problems", _problems(tag), source="arith", day=DAY, replace=True)
    maintain(wh, retention_hours=0, force=True)
    vacuumed = r"^version {} of table problems was vacuumed \(beyond retention\): 1 of its files are gone; read a " \
               r"newer version, e.g. version 2$"
    with pytest.raises(VersionVacuumed, match=vacuumed.format(0)):
        wh.read("problems", version=0)
    with pytest.raises(VersionVacuumed, match=vacuumed.format(1)):
        connect(wh.root, versions={"problems": 1})
    assert wh.read("problems", version=2).column("question").to_pylist() == ["c"] * 5
    out = CliRunner().invoke(main, ["sql", "SELECT count(*) FROM problems", "--root", wh.root,
                                    "--version", "problems=0"])
    assert out.exit_code == 1 and len(out.output.strip().splitlines()) == 1, out.output
    assert out.output.startswith("Error: version 0 of table problems was vacuumed (beyond retention)"), out.output
    assert "\x1b" not in out.output and "check the SQL" not in out.output
