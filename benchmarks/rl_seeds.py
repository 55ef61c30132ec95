"""The RL arms over several seeds: each seed's ``benchmarks/rl.py --seed N --out DIR`` folder read back and pooled.

Run: ``.venv/bin/python benchmarks/rl_seeds.py models/rl/benchmark models/rl/benchmark-seed1`` (the folders of
finished runs; nothing is trained). Each seed draws its own held-out and training problems, so pooling treats
every (seed, problem) as one held-out problem: gains are paired per problem within its seed, and an arm is
compared with the outcome-only arm on the same problems of the same seed (every arm of one seed shares them).

Prints a markdown table, then one JSON object: per arm ``seeds``, pooled ``acc_before``/``acc_after`` with 95%
intervals, the paired ``acc_gain_ci``, ``vs_outcome`` (after-accuracy minus the outcome arm's) with its paired
interval, per-seed gains, and the mean per-step error, steps per completion and characters before and after.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

# Run as a script, this folder heads sys.path and benchmarks/verifiers.py would shadow the `verifiers` package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from prm.evaluation.metrics import bootstrap_mean_ci, paired_bootstrap_diff_ci  # noqa: E402
from prm.format.markdown import markdown_table  # noqa: E402
from prm.rl.constants import OUTCOME, RESULT_FILE  # noqa: E402

HACKING = ("step_err", "steps", "chars")  # summary fields reported before -> after, averaged over seeds


def _results(run: Path) -> dict[str, dict[str, Any]]:
    """arm -> its result.json in one seed's comparison folder."""
    found = {p.parent.name: json.loads(p.read_text()) for p in sorted(run.glob(f"*/{RESULT_FILE}"))}
    if not found:
        sys.exit(f"Error: no */{RESULT_FILE} under {run}: pass the --out folder of a finished benchmarks/rl.py run")
    return found


def _accuracy(result: dict[str, Any], when: str) -> list[float]:
    return list(result[when]["table"]["problem_accuracy"])


def pool(runs: list[dict[str, dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """Per arm present in every run: pooled accuracies, paired gains and the comparison with outcome-only."""
    arms = [a for a in runs[0] if all(a in r for r in runs)]
    out: dict[str, dict[str, Any]] = {}
    for arm in arms:
        before = [x for r in runs for x in _accuracy(r[arm], "before")]
        after = [x for r in runs for x in _accuracy(r[arm], "after")]
        row: dict[str, Any] = {
            "seeds": len(runs), "problems": len(after),
            "acc_before": sum(before) / len(before), "acc_before_ci": bootstrap_mean_ci(before),
            "acc_after": sum(after) / len(after), "acc_after_ci": bootstrap_mean_ci(after),
            "acc_gain": (sum(after) - sum(before)) / len(after), "acc_gain_ci": paired_bootstrap_diff_ci(after, before),
            "gain_per_seed": [r[arm]["summary"]["acc_after"] - r[arm]["summary"]["acc_before"] for r in runs],
        }
        if arm != OUTCOME and OUTCOME in arms:
            outcome = [x for r in runs for x in _accuracy(r[OUTCOME], "after")]
            row["vs_outcome"] = (sum(after) - sum(outcome)) / len(after)
            row["vs_outcome_ci"] = paired_bootstrap_diff_ci(after, outcome)
        for name in HACKING:
            for when in ("before", "after"):
                values = [r[arm]["summary"][f"{name}_{when}"] for r in runs]
                row[f"{name}_{when}"] = sum(values) / len(values)
        out[arm] = row
    return out


def _ci(ci: Any, sign: str = "") -> str:
    return f"[{ci[0]:{sign}.3f}, {ci[1]:{sign}.3f}]"


def pooled_markdown(pooled: dict[str, dict[str, Any]]) -> str:
    """One line per arm: pooled accuracy before -> after, the paired gain, the difference from outcome-only, and
    the hacking signals."""
    rows = [{"arm": arm, "seeds x problems": f"{r['seeds']} x {r['problems'] // r['seeds']}",
             "answer acc [95% CI]": f"{r['acc_before']:.3f} {_ci(r['acc_before_ci'])} → "
                                    f"{r['acc_after']:.3f} {_ci(r['acc_after_ci'])}",
             "gain [95% CI]": f"{r['acc_gain']:+.3f} {_ci(r['acc_gain_ci'], '+')}",
             "gain per seed": ", ".join(f"{g:+.3f}" for g in r["gain_per_seed"]),
             "vs outcome [95% CI]": f"{r['vs_outcome']:+.3f} {_ci(r['vs_outcome_ci'], '+')}" if "vs_outcome" in r
             else "-",
             "step error": f"{r['step_err_before']:.3f} → {r['step_err_after']:.3f}",
             "steps/completion": f"{r['steps_before']:.2f} → {r['steps_after']:.2f}",
             "chars": f"{r['chars_before']:.0f} → {r['chars_after']:.0f}"} for arm, r in pooled.items()]
    return markdown_table(rows, render=str)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path, help="the --out folders of finished benchmarks/rl.py runs")
    args = parser.parse_args()
    pooled = pool([_results(run) for run in args.runs])
    print(pooled_markdown(pooled), flush=True)
    print(json.dumps({"runs": [str(r) for r in args.runs], "arms": pooled}), flush=True)


if __name__ == "__main__":
    main()
