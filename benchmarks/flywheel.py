"""The data flywheel on CPU: rounds of sample -> label (the round's own policy rolls out) -> retrain the PRM
(warm-started, every round's labels) -> resume RL with it, against one long RL run on round 0's PRM with the same
total RL steps.

Run: ``.venv/bin/python benchmarks/flywheel.py --rounds 3 --seed 0`` (about 25 minutes on 2 CPU cores). Per
round it reports the policy's held-out accuracy at the end of the round (95% interval over problems; the same
held-out problems every round and for the single run), per-step error, the retrained PRM's and round 0's stale
PRM's ProcessBench F1 on this round's own held-out samples with the paired interval of their difference, the
rollouts paid and the hacking signals. A finished round in ``--out`` is kept (its registry entry says so);
``--fresh`` starts over. Prints a markdown table, then one JSON object with ``rounds`` and
``single_run_policy_acc``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from prm.flywheel import (
    ON_REJECTED_PRM,
    STALE,
    FlywheelConfig,
    RoundReport,
    plot_rounds,
    policy_name,
    rl_on,
    round_policy,
    round_prm,
    rounds_markdown,
    run_round,
)
from prm.generation import GenerationConfig
from prm.metrics import paired_bootstrap_diff_ci
from prm.models import model_cache_dir
from prm.rl import ARMS
from warehouse import Warehouse, latest_model, new_run_id


def _args() -> argparse.Namespace:
    d = FlywheelConfig()
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--out", default=None, help="output folder (default: <model cache>/flywheel/benchmark-seed<N>)")
    p.add_argument("--seed", type=int, default=d.seed)
    p.add_argument("--per-level", type=int, default=d.per_level, help="problems per difficulty and round")
    p.add_argument("--rl-steps", type=int, default=d.rl_steps, help="GRPO steps per round")
    p.add_argument("--prm-steps", type=int, default=d.prm_steps)
    p.add_argument("--arm", default=d.arm, choices=tuple(ARMS), help="the RL arm every round runs (prm.rl.ARMS)")
    p.add_argument("--error-threshold", type=float, default=d.error_threshold,
                   help="first_error / flawed_penalty arms' wrong-step threshold (benchmarks/rl_threshold.py)")
    p.add_argument("--on-rejected-prm", default=d.on_rejected_prm, choices=ON_REJECTED_PRM,
                   help="a round whose retrained PRM the regression check rejects: stop, or RL on the last accepted "
                   "PRM (reported per round as reward_prm_round)")
    p.add_argument("--window", type=int, default=None, help="rounds of labels per PRM (default: all)")
    p.add_argument("--eval-problems", type=int, default=d.eval_problems, help="held-out per difficulty")
    p.add_argument("--fresh", action="store_true", help="delete --out first")
    return p.parse_args()


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _row(report: RoundReport) -> dict[str, Any]:
    f1 = report.f1.f1
    diff = report.f1.difference("fresh", STALE) if STALE in f1 else None
    after = report.rl.after
    return {
        "round": report.round, "policy_acc_before": report.rl.before.accuracy, "policy_acc": after.accuracy,
        "steps_before": report.rl.before.mean_steps,
        "policy_acc_ci": after.accuracy_ci(), "step_err": after.step_error,
        "sample_acc": report.samples.stats.accuracy, "prm_f1_fresh": f1["fresh"],
        "reward_prm_round": report.reward_prm_round,
        "prm_f1_stale": f1.get(STALE, f1["fresh"]),  # round 0: its PRM is the one later rounds leave stale
        "f1_fresh_minus_stale": diff["delta"] if diff else 0.0,
        "f1_fresh_minus_stale_ci": [diff["ci_low"], diff["ci_high"]] if diff else None,
        "n_test_samples": report.f1.n_test, "rollouts": report.rollouts,
        "steps_per_completion": after.mean_steps, "chars_per_completion": after.mean_chars,
        "problem_accuracy": list(after.table.problem_accuracy),
    }


def main() -> None:
    args = _args()
    started = time.perf_counter()
    config = FlywheelConfig(seed=args.seed, per_level=args.per_level, rl_steps=args.rl_steps, arm=args.arm,
                            error_threshold=args.error_threshold, on_rejected_prm=args.on_rejected_prm,
                            prm_steps=args.prm_steps, window=args.window, eval_problems=args.eval_problems)
    out = Path(args.out) if args.out else model_cache_dir() / "flywheel" / f"benchmark-seed{args.seed}"
    if args.fresh:
        shutil.rmtree(out, ignore_errors=True)
    wh = Warehouse(out / "warehouse")
    run_id = new_run_id()
    rows_file = out / "rounds.jsonl"
    done = [json.loads(line) for line in rows_file.read_text().splitlines()] if rows_file.is_file() else []
    rows: list[dict[str, Any]] = []
    before = None
    for k in range(args.rounds):
        kept = next((r for r in done if r["round"] == k), None)
        if kept is not None and latest_model(wh.root, "policy", name=policy_name(k)) is not None:
            rows.append(kept)
            _log(f"round {k}: kept from an earlier run")
            continue
        t0 = time.perf_counter()
        report = run_round(wh, k, config, out, GenerationConfig(kv_cache_gib=1.0), run_id=run_id, before=before,
                           progress=_log)
        before = report.rl.after
        rows.append({**_row(report), "wall_s": round(time.perf_counter() - t0, 1)})
        rows_file.write_text("".join(json.dumps(r) + "\n" for r in rows))
        left = args.rounds - k - 1
        _log(f"round {k} done in {rows[-1]['wall_s']:.0f} s; ETA {left * rows[-1]['wall_s'] / 60:.0f} min for "
             f"{left} more rounds, then the single run (~{args.rounds * config.rl_steps * 5 / 60:.0f} min)")
    # The baseline: one run from the starting policy with round 0's PRM for every round's RL steps and problems.
    single = rl_on(wh.root, list(range(args.rounds)), config, round_policy(wh.root, 0, config), round_prm(wh.root, 0),
                   out / "single-run", steps=args.rounds * config.rl_steps, progress=_log)
    final = rows[-1]["problem_accuracy"]
    single_acc = list(single.after.table.problem_accuracy)
    result = {
        "rounds": [{k: v for k, v in r.items() if k != "problem_accuracy"} for r in rows],
        "single_run_policy_acc": single.after.accuracy, "single_run_policy_acc_ci": single.after.accuracy_ci(),
        "single_run_steps_per_completion": single.after.mean_steps,
        "flywheel_minus_single": (sum(final) - sum(single_acc)) / len(final),
        "flywheel_minus_single_ci": paired_bootstrap_diff_ci(final, single_acc),
        "total_rl_steps": args.rounds * config.rl_steps, "seed": args.seed, "config": config.to_dict(),
        "wall_s": round(time.perf_counter() - started, 1),
    }
    plot = plot_rounds(rows, {"policy_acc": single.after.accuracy, "policy_acc_ci": single.after.accuracy_ci(),
                              "steps_per_completion": single.after.mean_steps}, out / "flywheel.png")
    result["plot"] = str(plot)
    print(rounds_markdown(result["rounds"]), flush=True)
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
