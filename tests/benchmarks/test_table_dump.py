"""benchmarks/table_dump.py, the refactor check's tool: two runs that differ only in what changes between identical
runs (run ids, durations, the checkout path, temporary folder names) dump alike; any other change does not."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
from deltalake import write_deltalake

ROOT = Path(__file__).resolve().parents[2]


def _warehouse(root: Path, checkout: str, *, seconds: float, tmp: str, score: float) -> Path:
    model = f"{checkout}/models/prm-compare-{tmp}/mc@687e40789ce4"
    write_deltalake(str(root / "rl_metrics"), pa.Table.from_pylist([
        {"run_id": f"run-{seconds}", "metric": "run/train_s", "value": seconds},
        {"run_id": f"run-{seconds}", "metric": "heldout/accuracy", "value": 0.5},
    ]))
    write_deltalake(str(root / "models"), pa.Table.from_pylist([
        {"uri": model, "metrics_json": json.dumps({"train_runtime_s": seconds, "eval_step_auc": 0.9}),
         "model": model, "score": score},
    ]))
    return root


def _dump(root: Path, checkout: Path) -> tuple[str, dict]:
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "table_dump.py"), str(root), "--checkout",
                           str(checkout)], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done.stdout, json.loads(done.stderr.strip().splitlines()[-1])


def test_identical_runs_from_two_checkouts_dump_alike_and_a_real_change_does_not(tmp_path: Path) -> None:
    a = _warehouse(tmp_path / "a", "/co/before", seconds=10.5, tmp="jn2je6zv", score=0.25)
    b = _warehouse(tmp_path / "b", "/co/after", seconds=13.7, tmp="ril4kocx", score=0.25)
    c = _warehouse(tmp_path / "c", "/co/after", seconds=13.7, tmp="ril4kocx", score=0.26)
    (out_a, sum_a), (out_b, sum_b) = _dump(a, Path("/co/before")), _dump(b, Path("/co/after"))
    assert out_a == out_b and sum_a == sum_b
    assert "heldout/accuracy" in out_a and "0.5" in out_a  # a metric that is not a duration stays
    _, sum_c = _dump(c, Path("/co/after"))
    assert sum_c["models"] != sum_b["models"] and sum_c["rl_metrics"] == sum_b["rl_metrics"]
