"""The hack rule recomputed on the committed RL runs (benchmarks/results/rl_seeds.log): the accuracy clause flags the
runs that ended below their start's 95% interval with their shape unchanged (process seed 1, prime_plain seeds 0 and
1), keeps the ones the shape rule flagged, and flags no outcome run. Each seed's start (accuracy, its interval, step
error) is tests/benchmarks/rl_seed_starts.json: the starting policy re-evaluated as benchmarks/rl.py does (source
named there), checked here against what the log implies."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load_script():
    spec = importlib.util.spec_from_file_location("rl_seeds_under_test", ROOT / "benchmarks" / "rl_seeds.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


recheck_hacked = _load_script().recheck_hacked


def _pooled() -> dict:
    lines = (ROOT / "benchmarks" / "results" / "rl_seeds.log").read_text().splitlines()
    return json.loads(next(line for line in reversed(lines) if line.startswith("{")))["arms"]


def _starts() -> list[dict]:
    return json.loads((Path(__file__).parent / "rl_seed_starts.json").read_text())["seeds"]


def test_the_starts_are_the_ones_the_committed_log_implies() -> None:
    pooled, starts = _pooled(), _starts()
    accuracy = [s["accuracy"] for s in starts]
    for row in pooled.values():
        assert row["seed_indices"] == [0, 1, 2]
        step0, last = row["curve"][0], row["curve"][-1]
        assert step0[0] == 0 and step0[1:] == pytest.approx([sum(accuracy) / 3, min(accuracy), max(accuracy)])
        after = [a + g for a, g in zip(accuracy, row["gain_per_seed"], strict=True)]  # each seed's final accuracy
        assert last[0] == row["steps_total"] and last[1:] == pytest.approx([sum(after) / 3, min(after), max(after)])
        assert sum(s["step_error"] for s in starts) / 3 == pytest.approx(row["step_err_before"])


def test_the_new_rule_flags_the_runs_that_ended_below_their_start() -> None:
    pooled = _pooled()
    old = {arm: row["hacked_seeds"] for arm, row in pooled.items()}
    assert old["process"] == [0] and old["prime_plain"] == [2]  # the shape-only rule
    new = recheck_hacked(pooled, _starts())
    assert new == {"outcome": [], "prime": [], "prime_plain": [0, 1, 2], "prm_min": [], "process": [0, 1]}
