"""The whole demo (refresh, PRM, comparison, RL) on an ``s3://`` warehouse and on a local folder, side by side.

Starts a real S3-compatible server (moto, a dev dependency) on 127.0.0.1, runs ``python -m pipelines.demo`` once
per root (own Dagster home and inbox each), then reads every table back through DuckDB from both and compares
them. Ignored, because they differ between any two runs: ``run_id``, ``created_at``, the random temp-folder name
in the label-source comparison's ``model`` column, and the RL run's wall-clock metrics. First it times
``Warehouse.table_lock`` on both roots (a lease in the bucket for S3, a ``flock`` locally): ``lock_s`` is the
first and the median of 30 acquire-and-release cycles. Last stdout line: JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from warehouse import PROJECT_ROOT, TABLES, Warehouse, connect

CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": "us-east-1"}
WALL_METRICS = ("run/train_s", "run/wall_s")


def _moto() -> tuple[subprocess.Popen, str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            httpx.get(url, timeout=1)
            return proc, url
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError("moto server did not start")


def _rows(root: str, table: str) -> list[tuple]:
    cols = ", ".join(n for n in TABLES[table].names if n not in ("run_id", "created_at"))
    if table == "prm_evaluations":
        cols = cols.replace("model,", "regexp_replace(model, 'prm-compare-[a-z0-9_]+', 'prm-compare-X') AS model,")
    sql = f"SELECT {cols} FROM {table}"
    if table == "rl_metrics":
        sql += f" WHERE metric NOT IN {WALL_METRICS}"
    return sorted(connect(root).execute(sql).fetchall(), key=repr)


def _lock_s(root: str, cycles: int = 30) -> dict[str, float]:
    """Seconds to take and give back ``Warehouse.table_lock`` with nobody else contending."""
    wh, times = Warehouse(root), []
    for _ in range(cycles):
        start = time.perf_counter()
        with wh.table_lock("problems"):
            pass
        times.append(time.perf_counter() - start)
    return {"first": round(times[0], 4), "median": round(statistics.median(times[1:]), 4)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--workdir", default=None, help="keep homes, logs and the local warehouse here")
    args = parser.parse_args()
    work = Path(args.workdir or tempfile.mkdtemp(prefix="prm-s3-demo-"))
    proc, url = _moto()
    try:
        os.environ.update({**CREDENTIALS, "AWS_ENDPOINT_URL": url})
        import boto3

        boto3.client("s3", endpoint_url=url).create_bucket(Bucket="prm-demo")
        roots = {"s3": "s3://prm-demo/warehouse", "local": str(work / "local-warehouse")}
        lock_s = {name: _lock_s(root) for name, root in roots.items()}
        print(json.dumps({"lock_s": lock_s}), file=sys.stderr, flush=True)
        walls = {}
        for name, root in roots.items():
            (work / name / "inbox").mkdir(parents=True, exist_ok=True)
            env = {**os.environ, "PRM_DATA_ROOT": root, "DAGSTER_HOME": str(work / name / "dagster"),
                   "PRM_INBOX": str(work / name / "inbox")}
            start = time.perf_counter()
            with open(work / f"{name}.log", "w") as log:
                rc = subprocess.run([sys.executable, "-m", "pipelines.demo"], cwd=PROJECT_ROOT, env=env, stdout=log,
                                    stderr=subprocess.STDOUT).returncode
            walls[name] = {"rc": rc, "wall_s": round(time.perf_counter() - start, 1)}
            print(json.dumps({name: walls[name]}), file=sys.stderr, flush=True)
        tables = {}
        for table in TABLES:
            here, there = _rows(roots["local"], table), _rows(roots["s3"], table)
            tables[table] = {"rows": len(here), "s3_rows": len(there), "identical": here == there}
        identical = all(t["identical"] for t in tables.values())
        print(json.dumps({"lock_s": lock_s, "runs": walls, "tables": tables, "all_identical": identical}))
    finally:
        proc.terminate()


if __name__ == "__main__":
    main()
