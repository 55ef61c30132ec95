"""The RL arms over several seeds: each seed's ``benchmarks/rl.py --seed N --out DIR`` folder read back and pooled.

Run: ``.venv/bin/python benchmarks/rl_seeds.py models/rl/benchmark models/rl/benchmark-seed1`` (the folders of
finished runs; nothing is trained). Each seed draws its own held-out and training problems, so pooling treats
every (seed, problem) as one held-out problem: gains are paired per problem within its seed, and an arm is
compared with the outcome-only arm on the same problems of the same seed (every arm of one seed shares them).

Prints a markdown table, then one JSON object: per arm ``seeds``, pooled ``acc_before``/``acc_after`` with 95%
intervals, the paired ``acc_gain_ci``, ``vs_outcome`` (after-accuracy minus the outcome arm's) with its paired
interval, per-seed gains, and the mean per-step error, steps per completion and characters before and after;
``steps_total`` (the arm's RL steps per seed), ``steps_to_outcome_final`` (the mean over seeds of the first
measured step at which the arm's held-out accuracy reached the outcome-only arm's final accuracy of that seed;
null when a seed never did; per seed in ``steps_to_outcome_final_per_seed``, with ``steps_to_outcome_final_ci``
over seeds) and ``hacked_seeds`` (indices, in the order given, of the seeds the hack rule marked,
prm.rl.curve.hacked_at), and ``curve``: [step, mean accuracy over seeds, lowest, highest] at every step all seeds
measured; for the ``prime`` arms ``online_step_auc_curve``: [step, the online PRM's held-out step AUC, mean over
seeds]. An arm run on fewer seeds than the others is pooled over its own (``seeds``, ``seed_indices``), and compared
with outcome-only on the seeds that ran both (``vs_outcome_seeds``). Flawed positives (right answers with a wrong
step by exact step truth, prm.rl.flawed): ``flawed_before``, ``flawed_after`` with ``flawed_after_ci`` (95% over
problems) and ``flawed_vs_outcome`` with its paired ``flawed_vs_outcome_ci``; null for results written before they
were kept. ``--plot PATH`` draws those curves (held-out
accuracy against RL step, a band from the lowest to the highest seed) for the README.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from prm.format import markdown_table
from prm.metrics import bootstrap_mean_ci, paired_bootstrap_diff_ci
from prm.rl import OUTCOME, RESULT_FILE, ArmResult, HeldOutPoint, flawed_ci, flawed_diff, flawed_share, hacked_at

HACKING = ("step_err", "steps", "chars")  # summary fields reported before -> after, averaged over seeds


def _results(run: Path) -> dict[str, dict[str, Any]]:
    """arm -> its result.json in one seed's comparison folder."""
    found = {p.parent.name: json.loads(p.read_text()) for p in sorted(run.glob(f"*/{RESULT_FILE}"))}
    if not found:
        sys.exit(f"Error: no */{RESULT_FILE} under {run}: pass the --out folder of a finished benchmarks/rl.py run")
    return found


def _accuracy(result: dict[str, Any], when: str) -> list[float]:
    return list(result[when]["table"]["problem_accuracy"])


def steps_to_reach(curve: list[tuple[int, float]], target: float) -> int | None:
    """The first step of a held-out curve ([(step, accuracy)], in step order) whose accuracy is >= ``target``.

    >>> steps_to_reach([(0, 0.3), (20, 0.38), (40, 0.45), (60, 0.44)], 0.44), steps_to_reach([(0, 0.3)], 0.4)
    (40, None)
    """
    return next((step for step, acc in curve if acc >= target - 1e-12), None)


def _curve_and_hacked(result: dict[str, Any]) -> tuple[list[tuple[int, float]], bool, int]:
    """(held-out curve [(step, accuracy)], hacked, steps) of one result.json: a full result is read back through
    prm.rl's own ArmResult (so results written before the curve and the hack rule existed get both, from before
    and after); a summary-only one from its summary's ``curve``/``hacked`` or its before and after."""
    try:
        res = ArmResult.from_dict(result)
    except (KeyError, TypeError):
        summary = result.get("summary", {})
        steps = int(result.get("steps") or summary.get("steps") or 0)
        curve = summary.get("curve") or [[0, summary["acc_before"]], [steps, summary["acc_after"]]]
        return [(int(a), float(b)) for a, b in curve], bool(summary.get("hacked", False)), steps
    return [(p.step, p.accuracy) for p in res.heldout_points], res.hacked_at is not None, res.steps


def efficiency(runs: list[dict[str, dict[str, Any]]], arm: str) -> dict[str, Any]:
    """``steps_total``, ``steps_to_outcome_final`` (+ per seed and interval over seeds) and ``hacked_seeds``."""
    read = [_curve_and_hacked(r[arm]) for r in runs]
    targets = [_curve_and_hacked(r[OUTCOME])[0][-1][1] if OUTCOME in r else None for r in runs]
    per_seed = [None if t is None else steps_to_reach(curve, t) for (curve, _, _), t in zip(read, targets, strict=True)]
    reached = [float(s) for s in per_seed if s is not None]
    every = bool(per_seed) and len(reached) == len(per_seed)
    return {"steps_total": min(steps for _, _, steps in read),
            "steps_to_outcome_final": sum(reached) / len(reached) if every else None,
            "steps_to_outcome_final_ci": bootstrap_mean_ci(reached) if every and len(reached) > 1 else None,
            "steps_to_outcome_final_per_seed": per_seed,
            "hacked_seeds": [i for i, (_, hacked, _) in enumerate(read) if hacked],
            "curve": seed_band([curve for curve, _, _ in read])}


def seed_band(curves: list[list[tuple[int, float]]]) -> list[list[float]]:
    """[step, mean, lowest, highest] of held-out accuracy over seeds at each step every seed measured.

    >>> seed_band([[(0, 0.2), (20, 0.4)], [(0, 0.4), (10, 0.5), (20, 0.6)]])
    [[0, 0.30000000000000004, 0.2, 0.4], [20, 0.5, 0.4, 0.6]]
    """
    by_step = [dict(c) for c in curves]
    steps = sorted(set.intersection(*(set(d) for d in by_step))) if by_step else []
    return [[step, sum(d[step] for d in by_step) / len(by_step), min(d[step] for d in by_step),
             max(d[step] for d in by_step)] for step in steps]


def plot_curves(pooled: dict[str, dict[str, Any]], path: Path) -> Path:
    """Held-out accuracy against RL step per arm: the mean over seeds, a band from the lowest to the highest."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from prm.reports import save_png

    fig = Figure(figsize=(7, 4.5))
    FigureCanvasAgg(fig)
    ax = fig.subplots()
    for arm, row in pooled.items():
        steps, mean, low, high = zip(*row["curve"], strict=True) if row["curve"] else ((), (), (), ())
        line = ax.plot(steps, mean, marker="o", label=f"{arm} ({row['seeds']} seeds)")[0]
        ax.fill_between(steps, low, high, alpha=0.15, color=line.get_color())
    ax.set_xlabel("RL step")
    ax.set_ylabel("held-out answer accuracy")
    ax.set_title("Held-out accuracy during RL: mean over seeds, band lowest to highest seed", fontsize="medium")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    return save_png(fig, path)


def _flawed(result: dict[str, Any], when: str) -> list[tuple[int, int]]:
    """Per held-out problem (right answers with a wrong step, right answers) of one result.json; [] before they
    were kept or without step truth."""
    return [(int(f), int(c)) for f, c in (result.get(when) or {}).get("flawed") or []]


def flawed_row(runs: list[dict[str, dict[str, Any]]], arm: str) -> dict[str, Any]:
    """Flawed positives of ``arm`` pooled over ``runs`` (every (seed, problem) one problem): the share of right
    answers with a wrong step by exact truth before and after (``flawed_after_ci``: 95% over problems), and after
    minus the outcome arm's on the runs that hold both (``flawed_vs_outcome``, paired over problems). None where a
    run kept no counts (results written before them, or problems without step truth)."""
    before = [_flawed(r[arm], "before") for r in runs]
    after = [_flawed(r[arm], "after") for r in runs]
    row: dict[str, Any] = {"flawed_before": None, "flawed_after": None, "flawed_after_ci": None,
                           "flawed_vs_outcome": None, "flawed_vs_outcome_ci": None}
    if not runs or not all(before) or not all(after):
        return row
    pooled_after = [c for counts in after for c in counts]
    row |= {"flawed_before": flawed_share([c for counts in before for c in counts]),
            "flawed_after": flawed_share(pooled_after), "flawed_after_ci": flawed_ci(pooled_after)}
    both = [r for r in runs if OUTCOME in r]
    if arm != OUTCOME and both and all(_flawed(r[OUTCOME], "after") for r in both):
        mine = [c for r in both for c in _flawed(r[arm], "after")]
        outcome = [c for r in both for c in _flawed(r[OUTCOME], "after")]
        row["flawed_vs_outcome"], row["flawed_vs_outcome_ci"] = flawed_diff(mine, outcome)
    return row


def recheck_hacked(pooled: dict[str, dict[str, Any]], starts: list[dict[str, Any]]) -> dict[str, list[int]]:
    """Per arm, the seeds (positions in ``starts``) the hack rule (prm.rl.curve.hacked_at) marks when all that is
    known of each run is what this script's pooled JSON keeps plus each seed's start: the start's accuracy, its 95%
    interval and step-error rate (``starts[i]``: ``accuracy``, ``accuracy_ci``, ``step_error``), and the run's final
    accuracy (start + ``gain_per_seed``). The pooled JSON keeps no per-seed training reward or final step error, so
    the accuracy clause decides alone (``rewards=None``), and the shape clause is the one the run already recorded
    (``hacked_seeds``, judged from the full result when pooled).

    >>> starts = [{"accuracy": 0.3, "accuracy_ci": [0.23, 0.37], "step_error": 0.17}] * 2
    >>> recheck_hacked({"a": {"seed_indices": [0, 1], "gain_per_seed": [-0.1, 0.02], "hacked_seeds": [],
    ...                       "steps_total": 100}}, starts)
    {'a': [0]}
    """
    out: dict[str, list[int]] = {}
    for arm, row in pooled.items():
        flagged = set(row.get("hacked_seeds") or [])
        for seed, gain in zip(row["seed_indices"], row["gain_per_seed"], strict=True):
            start = starts[seed]
            points = [HeldOutPoint(0, start["accuracy"], 1.0, 0.0, None, None, step_error=start["step_error"]),
                      HeldOutPoint(int(row["steps_total"]), start["accuracy"] + gain, 1.0, 0.0, None, None)]
            if hacked_at(points, start_ci=tuple(start["accuracy_ci"]), rewards=None) is not None:
                flagged.add(seed)
        out[arm] = sorted(flagged)
    return out


def pool(runs: list[dict[str, dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """Per arm, over the runs that hold it (``seed_indices``: their positions in ``runs``): pooled accuracies,
    paired gains, the comparison with outcome-only on the runs that hold both, the steps to reach outcome-only's
    final accuracy and the seeds marked hacked (positions in ``runs``)."""
    arms = list(dict.fromkeys(a for r in runs for a in r))
    out: dict[str, dict[str, Any]] = {}
    for arm in arms:
        index = [i for i, r in enumerate(runs) if arm in r]
        held = [runs[i] for i in index]
        before = [x for r in held for x in _accuracy(r[arm], "before")]
        after = [x for r in held for x in _accuracy(r[arm], "after")]
        row: dict[str, Any] = {
            "seeds": len(held), "seed_indices": index, "problems": len(after),
            "acc_before": sum(before) / len(before), "acc_before_ci": bootstrap_mean_ci(before),
            "acc_after": sum(after) / len(after), "acc_after_ci": bootstrap_mean_ci(after),
            "acc_gain": (sum(after) - sum(before)) / len(after), "acc_gain_ci": paired_bootstrap_diff_ci(after, before),
            "gain_per_seed": [r[arm]["summary"]["acc_after"] - r[arm]["summary"]["acc_before"] for r in held],
        }
        both = [r for r in held if OUTCOME in r]
        if arm != OUTCOME and both:
            mine = [x for r in both for x in _accuracy(r[arm], "after")]
            outcome = [x for r in both for x in _accuracy(r[OUTCOME], "after")]
            row["vs_outcome"] = (sum(mine) - sum(outcome)) / len(mine)
            row["vs_outcome_ci"] = paired_bootstrap_diff_ci(mine, outcome)
            row["vs_outcome_seeds"] = len(both)
        for name in HACKING:
            for when in ("before", "after"):
                values = [r[arm]["summary"][f"{name}_{when}"] for r in held]
                row[f"{name}_{when}"] = sum(values) / len(values)
        auc = [{p["step"]: p["online_step_auc"] for p in r[arm].get("heldout_curve") or []
                if p.get("online_step_auc") is not None} for r in held]
        if all(auc):  # prime arms: the online PRM's held-out step AUC, mean over seeds at each measured step
            row["online_step_auc_curve"] = [[step, sum(a[step] for a in auc) / len(auc)]
                                            for step in sorted(set.intersection(*(set(a) for a in auc)))]
        found = efficiency(held, arm)
        found["hacked_seeds"] = [index[i] for i in found["hacked_seeds"]]
        out[arm] = row | flawed_row(held, arm) | found
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
             "chars": f"{r['chars_before']:.0f} → {r['chars_after']:.0f}",
             "flawed positives": "-" if r.get("flawed_after") is None else
             f"{r['flawed_before']:.3f} → {r['flawed_after']:.3f} {_ci(r['flawed_after_ci'])}",
             "steps to outcome's final": "-" if r["steps_to_outcome_final"] is None else
             f"{r['steps_to_outcome_final']:.0f} / {r['steps_total']}",
             "hacked seeds": ", ".join(map(str, r["hacked_seeds"])) or "-"} for arm, r in pooled.items()]
    return markdown_table(rows, render=str)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path, help="the --out folders of finished benchmarks/rl.py runs")
    parser.add_argument("--plot", type=Path, default=None, help="write the accuracy-against-step plot here (PNG)")
    args = parser.parse_args()
    pooled = pool([_results(run) for run in args.runs])
    print(pooled_markdown(pooled), flush=True)
    if args.plot:
        print(f"plot: {plot_curves(pooled, args.plot)}", flush=True)
    print(json.dumps({"runs": [str(r) for r in args.runs], "arms": pooled}), flush=True)


if __name__ == "__main__":
    main()
