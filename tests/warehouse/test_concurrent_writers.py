"""Two writer processes append to and replace partitions of one table for many rounds while the parent SIGKILLs
them at random moments and restarts them; a reader process checks every snapshot it sees throughout.

Afterwards: every round's batch is there exactly once (no lost, no duplicated rows), each replaced partition holds
exactly its last round, and every table version ever committed reads back whole.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from warehouse import Warehouse

DAY = "2026-11-20"
ROUNDS, BATCH, REPLACED = 30, 20, 10

# argv: root, writer name, day, rounds, batch size, replaced rows. Round r replaces partition (source=<name>)
# with REPLACED rows of round r, then appends a batch of BATCH rows of round r to the shared partition. A restarted
# writer resumes after the last batch it finds committed (the replace is idempotent, so redoing one is harmless).
_WRITER = textwrap.dedent(
    """
    import os, sys
    from warehouse import Warehouse

    root, name, day = sys.argv[1:4]
    rounds, batch, replaced = map(int, sys.argv[4:7])
    wh = Warehouse(root)
    done = {q for q in wh.read_partition("problems", "shared", day).column("question").to_pylist()
            if q.startswith(name + ":")}
    start = 1 + max((int(q.split(":")[1]) for q in done), default=-1)
    for r in range(start, rounds):
        rows = [{"problem_id": f"{name}-{r}-{i}", "task": "t", "split": "s", "question": str(r),
                 "gold_answer": "1"} for i in range(replaced)]
        wh.write("problems", rows, source=name, day=day, writer="replacer", replace=True)
        rows = [{"problem_id": f"{name}-b{r}-{i}", "task": "t", "split": "s", "question": f"{name}:{r}",
                 "gold_answer": "1"} for i in range(batch)]
        wh.write("problems", rows, source="shared", day=day, writer=name)
    # Skip interpreter teardown: pyarrow's scanner threads can abort it ("terminate called without an active
    # exception", apache/arrow#34314), which would read as a failed writer after all its rounds committed.
    # The checks below look at what was committed, so that is all the exit code has to say.
    sys.stdout.flush()
    os._exit(0)
    """
)

# argv: root, stop file, report file, batch size, replaced rows, writers... Checks each snapshot it opens;
# writes the number of snapshots seen and the violations found.
_READER = textwrap.dedent(
    """
    import os, sys
    from collections import Counter
    from warehouse import connect
    from warehouse.db import snapshot_versions

    root, stop, report, batch, replaced, names = *sys.argv[1:4], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6:]
    seen, bad, last, filled = 0, [], -1, set()
    while not os.path.exists(stop):
        try:
            con = connect(root)
        except Exception as exc:  # no table yet is fine; anything else is a finding
            bad.append(f"open: {exc!r}")
            continue
        version = snapshot_versions(con)["problems"]
        if version is None:
            continue
        if version < last:
            bad.append(f"version went back from {last} to {version}")
        last = version
        rows = con.execute("SELECT source, question, problem_id FROM problems").fetchall()
        ids = Counter(r[2] for r in rows)
        if any(n > 1 for n in ids.values()):
            bad.append(f"v{version}: duplicate ids")
        batches = Counter(r[1] for r in rows if r[0] == "shared")
        if any(n != batch for n in batches.values()):
            bad.append(f"v{version}: partial batch {batches}")
        for name in names:
            rounds = Counter(r[1] for r in rows if r[0] == name)
            if len(rounds) > 1 or any(n != replaced for n in rounds.values()):
                bad.append(f"v{version}: partition {name} mixes or cuts rounds {rounds}")
            if rounds:
                filled.add(name)
            elif name in filled:
                bad.append(f"v{version}: partition {name} was emptied between a replace's delete and add")
        seen += 1
    with open(report, "w") as f:
        f.write(f"{seen}\\n" + "\\n".join(bad[:20]))
    os._exit(0)  # as the writer: the report is what counts, not pyarrow's teardown
    """
)


def _python(script: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", script, *args],
                            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})


@pytest.mark.slow
def test_two_writers_killed_at_random_lose_and_duplicate_nothing(tmp_path: Path) -> None:
    root, names = str(tmp_path / "wh"), ("alpha", "beta")
    stop, report = tmp_path / "stop", tmp_path / "report"
    sizes = (str(BATCH), str(REPLACED))
    reader = _python(_READER, root, str(stop), str(report), *sizes, *names)
    writers = {n: _python(_WRITER, root, n, DAY, str(ROUNDS), *sizes) for n in names}
    rng, kills, deadline = random.Random(0), 0, time.monotonic() + 400
    while any(w.poll() is None for w in writers.values()):
        assert time.monotonic() < deadline, "writers did not finish"
        time.sleep(rng.uniform(0.5, 2.5))
        name = rng.choice(names)
        if writers[name].poll() is None and kills < 12:
            writers[name].send_signal(signal.SIGKILL)
            writers[name].wait()
            kills += 1
            writers[name] = _python(_WRITER, root, name, DAY, str(ROUNDS), *sizes)
    assert all(w.returncode == 0 for w in writers.values())
    stop.touch()
    assert reader.wait(timeout=120) == 0
    seen, *violations = report.read_text().splitlines()
    assert violations == [] and int(seen) > 5, report.read_text()
    assert kills >= 3, f"only {kills} kills landed; the test must kill writers mid-run"

    wh = Warehouse(root)
    final = wh.read("problems").to_pylist()
    shared = sorted(r["problem_id"] for r in final if r["source"] == "shared")
    assert shared == sorted(f"{n}-b{r}-{i}" for n in names for r in range(ROUNDS) for i in range(BATCH))
    for name in names:
        assert sorted(r["question"] for r in final if r["source"] == name) == [str(ROUNDS - 1)] * REPLACED
    for version in range(wh.version("problems") + 1):  # every version ever committed reads back whole
        rows = wh.read("problems", version=version).to_pylist()
        batches: dict[str, int] = {}
        for r in rows:
            if r["source"] == "shared":
                batches[r["question"]] = batches.get(r["question"], 0) + 1
        assert set(batches.values()) <= {BATCH}, (version, batches)
