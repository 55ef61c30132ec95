"""benchmarks/flywheel_seeds.py pools finished flywheel runs: per round the policy's accuracy over every (seed,
problem), the final policy paired with the single long run's per problem, one JSON object last (run as a script
on two scripted seed folders)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _write(run: Path, finals: list[list[float]], single: list[float], reward_rounds: list[int] | None = None) -> None:
    (run / "single-run").mkdir(parents=True)
    rows = [{"round": k, "problem_accuracy": acc, "policy_acc_before": 0.25, "steps_before": 7.0, "step_err": 0.1,
             "prm_f1_fresh": 0.5, "prm_f1_stale": 0.4, "f1_fresh_minus_stale": 0.1,
             "f1_fresh_minus_stale_ci": [-0.1, 0.3], "rollouts": 100, "steps_per_completion": 6.0}
            for k, acc in enumerate(finals)]
    for row, j in zip(rows, reward_rounds or [], strict=False):  # runs before on_rejected_prm lack the key
        row["reward_prm_round"] = j
    (run / "rounds.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    after = {"table": {"problem_accuracy": single, "rows": [{"n_ops": 0, "mean_steps": 5.0}]}}
    (run / "single-run" / "result.json").write_text(json.dumps({"after": after}))


def test_two_seeds_pool_rounds_and_pair_the_final_policy_with_the_single_run(tmp_path: Path) -> None:
    _write(tmp_path / "s0", [[0.0, 0.5], [0.5, 1.0]], [0.5, 0.5])
    _write(tmp_path / "s1", [[0.5, 0.5], [1.0, 1.0]], [0.5, 1.0], reward_rounds=[0, 0])  # round 1's PRM rejected
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "flywheel_seeds.py"), str(tmp_path / "s0"),
                           str(tmp_path / "s1"), "--plot", str(tmp_path / "rounds.png")], capture_output=True,
                          text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    pooled = json.loads(done.stdout.strip().splitlines()[-1])
    assert (tmp_path / "rounds.png").stat().st_size > 0
    assert [r["policy_acc"] for r in pooled["rounds"]] == [0.375, 0.875]
    assert pooled["single_run_policy_acc"] == 0.625 and pooled["flywheel_minus_single"] == 0.25
    assert pooled["rounds"][1]["f1_fresh_minus_stale_per_seed"] == [[0.1, [-0.1, 0.3]]] * 2
    assert [r["reward_prm_round_per_seed"] for r in pooled["rounds"]] == [[0, 0], [1, 0]]
    assert "| r1, r0 |" in done.stdout


def test_a_folder_without_a_finished_run_is_refused(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "flywheel_seeds.py"), str(tmp_path)],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 1 and "lacks rounds.jsonl" in done.stderr
