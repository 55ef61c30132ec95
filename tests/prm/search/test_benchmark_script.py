"""benchmarks/search.py at a tiny size: its last line is the one JSON object the issue asks for."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

pytestmark = pytest.mark.slow


def test_tiny_run_ends_with_budgets_and_every_method(tiny_prm: Path) -> None:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "search.py"), "--prm", str(tiny_prm),
                           "--problems", "2", "--budgets", "100", "200", "--m", "2"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["budgets"] == [100, 200]
    got = {(m["method"], m["budget"]) for m in result["methods"]}
    methods = ("best_of_n", "weighted_vote", "majority_vote", "beam_search", "dvts")
    assert got == {(k, b) for k in methods for b in (100, 200)}
    for m in result["methods"]:
        low, high = m["accuracy_ci"]
        assert 0 <= low <= m["accuracy"] <= high <= 1 and m["generated_tokens"] > 0
        assert m["set"] == "in_distribution" and m["seeds"] == [0]
        assert (m["prm_tokens"] > 0) == (m["method"] != "majority_vote")  # majority vote never reads the PRM
    for baseline, key in (("majority_vote", "vs_majority"), ("best_of_n", "vs_best_of_n")):
        rows = {(r["method"], r["budget"]): r for r in result[key]}
        assert set(rows) == {(k, b) for k, b in got if k != baseline}
        for r in rows.values():
            assert r["diff_ci"][0] <= r["diff"] <= r["diff_ci"][1] and r["set"] == "in_distribution"
