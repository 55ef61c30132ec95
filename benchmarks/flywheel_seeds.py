"""The flywheel over several seeds: each seed's ``benchmarks/flywheel.py --seed N --out DIR`` folder read back and
pooled (nothing is trained).

Run: ``.venv/bin/python benchmarks/flywheel_seeds.py models/flywheel/benchmark-seed0 models/flywheel/benchmark-seed1
--plot benchmarks/results/flywheel.png``.
Each seed draws its own problems, so pooling treats every (seed, held-out problem) as one problem: per round the
policy's held-out accuracy with a 95% interval over them, and at the end the flywheel's final policy minus the
single long run's, paired per problem. The PRM's fresh-minus-stale F1 is reported per seed with its own paired
interval (the held-out samples differ by seed and round) and averaged. Prints a markdown table, then one JSON
object.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from prm.flywheel import plot_rounds
from prm.format import markdown_table
from prm.metrics import bootstrap_mean_ci, paired_bootstrap_diff_ci
from prm.rl import RESULT_FILE

SINGLE_DIR = "single-run"


def _seed(run: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(rounds, the single run's result) of one finished seed folder."""
    rounds_file, single_file = run / "rounds.jsonl", run / SINGLE_DIR / RESULT_FILE
    if not rounds_file.is_file() or not single_file.is_file():
        sys.exit(f"Error: {run} lacks rounds.jsonl or {SINGLE_DIR}/{RESULT_FILE}: pass the --out folder of a "
                 "finished benchmarks/flywheel.py run")
    rounds = [json.loads(line) for line in rounds_file.read_text().splitlines()]
    start = run / "round-0" / "rl" / RESULT_FILE  # runs that predate steps_before: round 0's RL result holds it
    if rounds and "steps_before" not in rounds[0] and start.is_file():
        rounds[0]["steps_before"] = _overall(json.loads(start.read_text())["before"])["mean_steps"]
    return rounds, json.loads(single_file.read_text())


def _overall(held: dict[str, Any]) -> dict[str, Any]:
    """The pooled row (n_ops 0) of a held-out table."""
    return next(r for r in held["table"]["rows"] if r["n_ops"] == 0)


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def pool(runs: list[tuple[list[dict[str, Any]], dict[str, Any]]]) -> dict[str, Any]:
    """Per round the pooled policy accuracy and the per-seed PRM F1s; the final comparison with the single run."""
    n_rounds = min(len(rounds) for rounds, _ in runs)
    rounds_out = []
    for k in range(n_rounds):
        rows = [rounds[k] for rounds, _ in runs]
        accs = [x for r in rows for x in r["problem_accuracy"]]
        rounds_out.append({
            "round": k, "seeds": len(rows), "policy_acc": _mean(accs), "policy_acc_ci": bootstrap_mean_ci(accs),
            "step_err": _mean([r["step_err"] for r in rows]),
            "prm_f1_fresh": _mean([r["prm_f1_fresh"] or 0.0 for r in rows]),
            "prm_f1_stale": _mean([r["prm_f1_stale"] or 0.0 for r in rows]),
            "f1_fresh_minus_stale_per_seed": [[r["f1_fresh_minus_stale"], r["f1_fresh_minus_stale_ci"]] for r in rows],
            # the round whose PRM rewarded each seed's RL (earlier than k where round k's PRM was rejected)
            "reward_prm_round_per_seed": [r.get("reward_prm_round", k) for r in rows],
            "rollouts": _mean([r["rollouts"] for r in rows]),
            "steps_per_completion": _mean([r["steps_per_completion"] for r in rows]),
        })
    for key in ("policy_acc_before", "steps_before"):  # the starting policy, for the plot
        values = [rounds[0][key] for rounds, _ in runs if rounds[0].get(key) is not None]
        rounds_out[0][key] = _mean(values) if values else None
    final = [x for rounds, _ in runs for x in rounds[n_rounds - 1]["problem_accuracy"]]
    single = [x for _, s in runs for x in s["after"]["table"]["problem_accuracy"]]
    return {"rounds": rounds_out, "single_run_policy_acc": _mean(single),
            "single_run_steps_per_completion": _mean([_overall(s["after"])["mean_steps"] for _, s in runs]),
            "single_run_policy_acc_ci": bootstrap_mean_ci(single),
            "flywheel_minus_single": _mean(final) - _mean(single),
            "flywheel_minus_single_ci": paired_bootstrap_diff_ci(final, single)}


def _ci(ci: Any) -> str:
    return "-" if not ci or ci[0] is None else f"[{ci[0]:+.2f}, {ci[1]:+.2f}]"


def pooled_markdown(pooled: dict[str, Any]) -> str:
    rows = [{"round": r["round"], "policy acc [95% CI]": f"{r['policy_acc']:.3f} [{r['policy_acc_ci'][0]:.3f}, "
             f"{r['policy_acc_ci'][1]:.3f}]", "step error": f"{r['step_err']:.3f}",
             "PRM F1 fresh / stale": f"{r['prm_f1_fresh']:.3f} / {r['prm_f1_stale']:.3f}",
             "fresh - stale per seed [95% CI]": "; ".join(f"{d:+.3f} {_ci(ci)}" for d, ci in
                                                          r["f1_fresh_minus_stale_per_seed"]),
             "RL reward PRM per seed": ", ".join(f"r{j}" for j in r["reward_prm_round_per_seed"]),
             "rollouts": f"{r['rollouts']:.0f}", "steps/completion": f"{r['steps_per_completion']:.2f}"}
            for r in pooled["rounds"]]
    return markdown_table(rows, render=str)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path, help="the --out folders of finished benchmarks/flywheel.py runs")
    parser.add_argument("--plot", type=Path, default=None, help="write the pooled rounds plot here (PNG)")
    args = parser.parse_args()
    pooled = pool([_seed(run) for run in args.runs])
    if args.plot:
        single = {"policy_acc": pooled["single_run_policy_acc"], "policy_acc_ci": pooled["single_run_policy_acc_ci"],
                  "steps_per_completion": pooled["single_run_steps_per_completion"]}
        pooled["plot"] = str(plot_rounds(pooled["rounds"], single, args.plot))
    print(pooled_markdown(pooled), flush=True)
    ci = pooled["flywheel_minus_single_ci"]
    print(f"\nfinal flywheel policy minus one long run: {pooled['flywheel_minus_single']:+.3f} "
          f"[{ci[0]:+.3f}, {ci[1]:+.3f}]", flush=True)
    print(json.dumps({"runs": [str(r) for r in args.runs], **pooled}), flush=True)


if __name__ == "__main__":
    main()
