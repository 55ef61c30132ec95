"""Schema validation, atomic commits, partitions and replacement of the Delta store."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from warehouse import Warehouse, connect
from warehouse.locks import lock_path
from warehouse.schemas import SCHEMA_VERSION, TABLES, file_schema
from warehouse.validate import SchemaError


def problem(i: int, **over) -> dict:
    row = {"problem_id": f"p{i}", "task": "arith_chain", "split": "train", "question": f"{i}+1",
           "gold_answer": str(i + 1)}
    return {**row, **over}


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([problem(0), problem(1, question=None)], r"problems\.question: row 1 is null, but the column is required"),
        ([problem(0), problem(1), problem(2, seed="x")], r"problems\.seed: row 2 has 'x', which is not int64"),
        ([problem(0, colour="red")], r"problems: unknown column\(s\) \['colour'\]"),
        ([{"problem_id": "p0"}], r"problems\.task: required column is missing"),
        ([problem(0, n_gold_steps=2**40)], r"problems\.n_gold_steps: row 0 has 1099511627776"),
    ],
)
def test_bad_rows_name_table_column_and_row_and_write_nothing(wh: Warehouse, rows, message) -> None:
    with pytest.raises(SchemaError, match=message):
        wh.write("problems", rows, source="arith", day="2026-11-20")
    assert wh.files("problems") == [] and wh.version("problems") is None


def test_round_trip_keeps_values_and_adds_provenance(wh: Warehouse) -> None:
    result = wh.write("problems", [problem(i) for i in range(3)], source="arith", day="2026-11-20", run_id="r1")
    assert (result.rows, result.version) == (3, 0) and result.path.endswith("problems/source=arith/day=2026-11-20")
    # Partition columns (source, day, writer) live in the folder names, not in the file.
    (path,) = wh.files("problems")
    assert "/writer=problems/" in path
    assert pq.read_schema(path).names == file_schema("problems").names
    assert wh.history("problems")[0]["run_id"] == "r1"
    back = wh.read("problems")
    assert back.column("question").to_pylist() == ["0+1", "1+1", "2+1"]
    assert set(back.column("run_id").to_pylist()) == {"r1"}
    assert set(back.column("day").to_pylist()) == {"2026-11-20"}


def test_columnar_and_arrow_inputs_are_accepted(wh: Warehouse) -> None:
    columns = {k: [problem(i)[k] for i in range(4)] for k in problem(0)}
    wh.write("problems", columns, source="arith", day="2026-11-20")
    wh.write("problems", pa.Table.from_pydict(columns), source="arith", day="2026-11-21")
    assert wh.read("problems").num_rows == 8


def test_appends_across_partitions_keep_history(wh: Warehouse) -> None:
    for day in ("2026-11-19", "2026-11-20", "2026-11-21"):
        for source in ("arith", "gsm8k"):
            wh.write("problems", [problem(0, problem_id=f"{source}-{day}")], source=source, day=day)
    con = connect(wh.root)
    rows = con.execute("SELECT source, count(*) FROM problems GROUP BY 1 ORDER BY 1").fetchall()
    assert rows == [("arith", 3), ("gsm8k", 3)]
    days = con.execute("SELECT DISTINCT day FROM problems WHERE source = 'gsm8k' ORDER BY 1").fetchall()
    assert [d for (d,) in days] == ["2026-11-19", "2026-11-20", "2026-11-21"]


def test_replace_rewrites_only_the_writers_partition(wh: Warehouse) -> None:
    kwargs = {"source": "arith", "day": "2026-11-20"}
    wh.write("step_labels", [_label("mc", 0.5)], writer="mc", **kwargs)
    wh.write("step_labels", [_label("sympy", 1.0)], writer="sympy", **kwargs)
    wh.write("step_labels", [_label("mc", 0.5)], writer="mc", source="arith", day="2026-11-21")
    result = wh.write("step_labels", [_label("mc", 0.25)], writer="mc", replace=True, **kwargs)
    assert result.replaced == 1
    con = connect(wh.root)
    got = con.execute("SELECT day, method, soft_label FROM step_labels ORDER BY day, method").fetchall()
    assert got == [("2026-11-20", "mc", 0.25), ("2026-11-20", "sympy", 1.0), ("2026-11-21", "mc", 0.5)]


def test_replace_where_swaps_matching_rows_in_every_partition(wh: Warehouse) -> None:
    wh.write("step_labels", [_label("mc", 0.5)], writer="mc", source="arith", day="2026-11-20")
    wh.write("step_labels", [_label("mc", 0.5)], writer="mc", source="gsm8k", day="2026-11-21")
    wh.write("step_labels", [_label("sympy", 1.0)], writer="sympy", source="arith", day="2026-11-20")
    result = wh.write("step_labels", [_label("mc", 0.75)], writer="mc", source="arith", day="2026-11-22",
                      replace_where={"method": "mc"})
    assert result.replaced == 2
    got = connect(wh.root).execute("SELECT day, method, soft_label FROM step_labels ORDER BY day, method").fetchall()
    assert got == [("2026-11-20", "sympy", 1.0), ("2026-11-22", "mc", 0.75)]
    with pytest.raises(ValueError, match="not both"):
        wh.write("step_labels", [], writer="mc", source="arith", day="2026-11-22", replace=True,
                 replace_where={"method": "mc"})


def _label(method: str, soft: float) -> dict:
    return {"solution_id": "s1", "problem_id": "p1", "step_idx": 0, "method": method, "soft_label": soft,
            "hard_label": soft > 0, "status": "labeled", "labeler_version": "test"}


@pytest.mark.parametrize(("day", "message"), [("21-11-2026", "YYYY-MM-DD"), ("2026-11-21/../x", "YYYY-MM-DD")])
def test_bad_partition_values_are_rejected(wh: Warehouse, day: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        wh.write("problems", [problem(0)], source="arith", day=day)


_WRITE_FOREVER = textwrap.dedent(
    """
    import sys
    from warehouse import Warehouse
    n = 200_000
    cols = {"problem_id": [f"p{i}" for i in range(n)], "task": ["t"] * n, "split": ["s"] * n,
            "question": ["what is " * 20] * n, "gold_answer": ["1"] * n}
    wh = Warehouse(sys.argv[1])
    print("ready", flush=True)
    while True:
        wh.write("problems", cols, source="arith", day="2026-11-20")
        print("committed", flush=True)
    """
)


def test_write_killed_at_a_random_moment_leaves_only_whole_files(wh: Warehouse) -> None:
    proc = subprocess.Popen([sys.executable, "-c", _WRITE_FOREVER, str(wh.root)], stdout=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert proc.stdout.readline().strip() == b"ready"
    assert proc.stdout.readline().strip() == b"committed"  # the first write is whole; the next one has begun
    time.sleep(random.uniform(0.0, 1.0))  # where in that next write the kill lands; no outcome depends on it
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    version = wh.version("problems")
    assert version is not None, "the writer should have committed at least once before it was killed"
    (count,) = connect(wh.root).execute("SELECT count(*) FROM problems").fetchone()
    assert count == 200_000 * (version + 1)  # every committed write is whole and readable, no partial one


def test_every_table_has_the_provenance_and_partition_columns() -> None:
    for name, schema in TABLES.items():
        assert {"run_id", "created_at", "source", "day"} <= set(schema.names), name
        assert schema.metadata[b"schema_version"] == str(SCHEMA_VERSION).encode()



def _blocked_on_flock(pid: int, inode: int) -> bool:
    """Whether ``pid`` waits for a ``flock`` on the file with ``inode`` (a "->" line of Linux's /proc/locks)."""
    with open("/proc/locks") as f:
        for line in f:
            fields = line.split()
            # e.g. "1: -> FLOCK  ADVISORY  WRITE 22775 fe:00:2149638 0 EOF"
            if fields[1:3] == ["->", "FLOCK"] and fields[5] == str(pid) and fields[6].endswith(f":{inode}"):
                return True
    return False


def test_table_lock_is_exclusive_across_processes(tmp_path):
    """A second process waits for the table lock until the first lets go (no sleep decides the outcome: the
    kernel's lock table shows the child blocked on the lock; the child records when it got the lock, the parent
    when it released it)."""
    if not os.path.exists("/proc/locks"):
        pytest.skip("needs Linux's /proc/locks to see the second process block on the lock")
    wh = Warehouse(tmp_path / "wh")
    acquired = tmp_path / "acquired"
    script = textwrap.dedent(f"""
        import time
        from warehouse import Warehouse
        with Warehouse({str(wh.root)!r}).table_lock("problems"):
            open({str(acquired)!r}, "w").write(str(time.monotonic()))
    """)
    with wh.table_lock("problems"):
        child = subprocess.Popen([sys.executable, "-c", script])
        inode = os.stat(lock_path(str(wh.root), "problems")).st_ino
        deadline = time.monotonic() + 120  # only guards against a hang: the outcome is the child blocking
        while not _blocked_on_flock(child.pid, inode):
            assert child.poll() is None, "the child ended while the parent held the lock"
            assert time.monotonic() < deadline, "the child never blocked on the table lock"
            time.sleep(0.05)
        assert not acquired.exists()  # blocked in the lock, not merely slow to start
        released = time.monotonic()
    assert child.wait(timeout=120) == 0
    assert float(acquired.read_text()) >= released
    assert wh.files("problems") == []  # the lock file is not a data file


@pytest.mark.parametrize(("bad", "kind"), [(["p1", "x"], "list"), (7, "int"), ("p1", "str"), (None, "NoneType")])
def test_a_row_that_is_not_a_mapping_names_its_index_and_table(wh: Warehouse, bad, kind: str) -> None:
    with pytest.raises(ValueError, match=rf"^problems: row 1 is a {kind}, expected a mapping of column to value"):
        wh.write("problems", [problem(0), bad], source="arith", day="2026-11-20")
    assert wh.version("problems") is None


@pytest.mark.parametrize(("source", "writer"), [("a/b", None), ("a b", None), ("../x", None), (".hidden", None),
                                                ("_a", None), ("a_", None), ("", None), ("naïve", None),
                                                ("arith", "x/y")])
def test_a_partition_value_that_would_be_altered_is_refused(wh: Warehouse, source: str, writer: str | None) -> None:
    what = "writer" if writer else "source"
    with pytest.raises(ValueError, match=rf"^{what} .* cannot name a partition: use only letters, digits, '_', '-'"):
        wh.write("problems", [problem(0)], source=source, day="2026-11-20", writer=writer)
    assert wh.version("problems") is None


@pytest.mark.parametrize("source", ["gsm8k", "arith", "MATH-500", "my_data.v2", "-x"])
def test_valid_sources_are_stored_as_given(wh: Warehouse, source: str) -> None:
    result = wh.write("problems", [problem(0)], source=source, day="2026-11-20")
    assert result.path.endswith(f"/source={source}/day=2026-11-20")
    assert wh.read("problems").column("source").to_pylist() == [source]
    assert wh.read_partition("problems", source, "2026-11-20").num_rows == 1
