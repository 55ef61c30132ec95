"""benchmarks/rl_seeds.py pools finished RL runs: gains paired per problem within a seed, arms against outcome-only on
the same problems, one JSON object last (run as a script on two scripted comparison folders)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _write(run: Path, arm: str, before: list[float], after: list[float]) -> None:
    summary = {"acc_before": sum(before) / len(before), "acc_after": sum(after) / len(after), "step_err_before": 0.2,
               "step_err_after": 0.1, "steps_before": 7.0, "steps_after": 6.0, "chars_before": 80.0,
               "chars_after": 70.0}
    held = {w: {"table": {"problem_accuracy": acc}} for w, acc in (("before", before), ("after", after))}
    (run / arm).mkdir(parents=True)
    (run / arm / "result.json").write_text(json.dumps({"arm": arm, **held, "summary": summary}))


def test_two_seeds_pool_their_problems_and_pair_each_arm_with_outcome(tmp_path: Path) -> None:
    for seed, shift in ((0, 0.0), (1, 0.25)):
        _write(tmp_path / f"s{seed}", "outcome", [0.0, 0.5], [0.5, 0.5 + shift])
        _write(tmp_path / f"s{seed}", "prm_min", [0.0, 0.5], [0.5, 1.0])
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "rl_seeds.py"), str(tmp_path / "s0"),
                           str(tmp_path / "s1")], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    arms = json.loads(done.stdout.strip().splitlines()[-1])["arms"]
    assert arms["outcome"]["problems"] == 4 and arms["outcome"]["acc_after"] == (0.5 + 0.5 + 0.5 + 0.75) / 4
    assert arms["outcome"]["gain_per_seed"] == [0.25, 0.375]
    assert arms["prm_min"]["acc_gain"] == 0.5 and arms["prm_min"]["vs_outcome"] == (0.5 + 0.25) / 4
    low, high = arms["prm_min"]["vs_outcome_ci"]
    assert 0.0 <= low <= arms["prm_min"]["vs_outcome"] <= high <= 0.5
    assert "vs_outcome" not in arms["outcome"] and "| prm_min | 2 x 2 |" in done.stdout


def test_a_folder_without_results_says_what_to_pass(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "rl_seeds.py"), str(tmp_path)],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode != 0 and "pass the --out folder of a finished benchmarks/rl.py run" in done.stderr
