"""Warehouse benchmark: validated ingest of 1M step labels as Delta commits, one grouped aggregate in DuckDB vs
pandas over the same Parquet files, the cost of one small commit, and a time-travel read. Last stdout line: one
JSON object.

Targets: ingest >= 500k rows/s; DuckDB >= 5x faster than pandas (read, then aggregate). ``delta_commit_s`` (median
of small appends) and ``time_travel_read_s`` (open the first version and aggregate it) are reported, no target.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

from warehouse import Warehouse, connect

METHODS = np.array(["mc", "omegaprm", "sympy", "judge"])
COMMITS = 20
AGG_SQL = """
SELECT method, step_idx, count(*) AS n, avg(soft_label) AS mean_soft,
       avg(CASE WHEN hard_label THEN 1.0 ELSE 0.0 END) AS share_good, sum(cost_tokens) AS tokens
FROM step_labels GROUP BY method, step_idx ORDER BY method, step_idx"""


def make_batch(start: int, n: int, rng: np.random.Generator) -> pa.Table:
    idx = np.arange(start, start + n)
    soft = rng.random(n, dtype=np.float32)
    return pa.table({
        "solution_id": pa.array([f"sol-{i // 8:08d}" for i in idx]),
        "problem_id": pa.array([f"prob-{i // 64:07d}" for i in idx]),
        "step_idx": pa.array((idx % 8).astype(np.int32)),
        "method": pa.array(METHODS[rng.integers(0, len(METHODS), n)]),
        "soft_label": pa.array(soft),
        "hard_label": pa.array(soft > 0.3),
        "status": pa.array(np.full(n, "labeled")),
        "n_rollouts": pa.array(np.full(n, 8, dtype=np.int32)),
        "n_correct": pa.array((soft * 8).astype(np.int32)),
        "labeler_version": pa.array(np.full(n, "bench")),
        "cost_rollouts": pa.array(np.full(n, 8, dtype=np.int32)),
        "cost_tokens": pa.array(rng.integers(50, 500, n)),
    })


def run(rows: int, batch: int, root: Path) -> dict:
    wh = Warehouse(root)
    rng = np.random.default_rng(0)
    batches = [make_batch(s, min(batch, rows - s), rng) for s in range(0, rows, batch)]
    start = time.perf_counter()
    for i, data in enumerate(batches):  # one file per day partition, as nightly refreshes would write
        wh.write("step_labels", data, source="bench", day=f"2026-11-{1 + i % 28:02d}", writer=f"b{i}")
    ingest_s = time.perf_counter() - start

    con = connect(root)
    start = time.perf_counter()
    duck = con.execute(AGG_SQL).df()
    duck_s = time.perf_counter() - start

    start = time.perf_counter()
    frame = pd.concat([pd.read_parquet(p) for p in wh.files("step_labels")], ignore_index=True)
    frame["good"] = frame["hard_label"].astype(float)
    grouped = frame.groupby(["method", "step_idx"]).agg(
        n=("soft_label", "size"), mean_soft=("soft_label", "mean"), share_good=("good", "mean"),
        tokens=("cost_tokens", "sum")).reset_index()
    pandas_s = time.perf_counter() - start
    assert len(grouped) == len(duck) and int(grouped["n"].sum()) == int(duck["n"].sum()) == rows

    commits = []
    for i in range(COMMITS):  # what a labeler's chunk write costs: 100 rows, one commit
        small = make_batch(rows + i * 100, 100, rng)
        start = time.perf_counter()
        wh.write("step_labels", small, source="bench", day="2026-11-30", writer="small")
        commits.append(time.perf_counter() - start)

    start = time.perf_counter()  # the first version: one batch, read back through the log of every later commit
    past = connect(root, versions={"step_labels": 0}).execute(AGG_SQL).df()
    travel_s = time.perf_counter() - start
    assert int(past["n"].sum()) == min(batch, rows)
    return {
        "rows": rows,
        "files": len(batches),
        "ingest_s": round(ingest_s, 3),
        "ingest_rows_per_s": round(rows / ingest_s),
        "duckdb_aggregate_s": round(duck_s, 4),
        "pandas_aggregate_s": round(pandas_s, 4),
        "duckdb_speedup": round(pandas_s / duck_s, 2),
        "delta_commit_s": round(statistics.median(commits), 4),
        "delta_commits": COMMITS,
        "table_version": wh.version("step_labels"),
        "time_travel_read_s": round(travel_s, 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--batch", type=int, default=100_000, help="rows per validated write (one Delta commit)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        result = run(args.rows, args.batch, Path(tmp))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
