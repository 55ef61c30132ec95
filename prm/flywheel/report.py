"""The flywheel's per-round table and plot: held-out policy accuracy per round next to one long RL run, and the
retrained PRM's F1 next to round 0's left stale, both on each round's own samples.

Figures use :class:`matplotlib.figure.Figure` on the Agg canvas, never ``pyplot``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from prm.flywheel.data import rollouts_paid
from prm.flywheel.lineage import policy_name, prm_name
from prm.flywheel.rounds import round_source
from prm.format import markdown_table
from prm.reports import save_png
from warehouse import latest_model

COLUMNS = ("round", "policy_acc", "policy_acc_ci", "step_err", "prm_f1_fresh", "prm_f1_stale", "f1_fresh_minus_stale",
           "f1_fresh_minus_stale_ci", "reward_prm_round", "rollouts", "steps_per_completion", "chars_per_completion")


def rounds_markdown(rounds: Sequence[Mapping[str, Any]]) -> str:
    """One row per round (the benchmark's ``rounds`` entries)."""
    return markdown_table([{c: r.get(c) for c in COLUMNS} for r in rounds], list(COLUMNS))


def registered_rounds(root: str | Path) -> list[dict[str, Any]]:
    """Rows (as the benchmark's ``rounds``) of every round the registry holds a policy for, from round 0 on."""
    rows: list[dict[str, Any]] = []
    # The newest registration of each round, rejected or not: the table records what each round did.
    while (policy := latest_model(root, "policy", source=round_source(len(rows)), name=policy_name(len(rows)),
                                  include_rejected=True)):
        k, pm = len(rows), policy.metrics
        prm = latest_model(root, "prm", source=round_source(k), name=prm_name(k), include_rejected=True)
        fm = prm.metrics if prm else {}
        rows.append({"round": k, "policy_acc_before": pm.get("acc_before"), "policy_acc": pm.get("acc_after"),
                     "policy_acc_ci": _interval(pm, "acc_after"),
                     "step_err": pm.get("step_err_after"), "prm_f1_fresh": fm.get("f1_fresh"),
                     "prm_f1_stale": fm.get("f1_stale", fm.get("f1_fresh")),
                     "f1_fresh_minus_stale": fm.get("f1_minus_stale"),
                     "f1_fresh_minus_stale_ci": _interval(fm, "f1_minus_stale"), "rollouts": rollouts_paid(root, k),
                     # entries from before on_rejected_prm always rewarded with their own round's PRM
                     "reward_prm_round": int(pm.get("reward_prm_round", k)),
                     "steps_before": pm.get("steps_before"), "steps_per_completion": pm.get("steps_after"),
                     "chars_per_completion": pm.get("chars_after")})
    return rows


def _interval(metrics: Mapping[str, float], name: str) -> list[float] | None:
    """``[<name>_low, <name>_high]`` of registry metrics; None when either end is missing."""
    low, high = metrics.get(f"{name}_low"), metrics.get(f"{name}_high")
    return None if low is None or high is None else [low, high]


def _value(value: float | None) -> float:
    """A missing number (an F1 that could not be computed) as NaN: a gap in the line, not a crash."""
    return float("nan") if value is None else value


def _err(value: float, ci: Sequence[float] | None) -> tuple[float, float]:
    if not ci or ci[0] is None:
        return 0.0, 0.0
    return max(0.0, value - ci[0]), max(0.0, ci[1] - value)


def plot_rounds(rounds: Sequence[Mapping[str, Any]], single: Mapping[str, Any] | None,
                path: str | os.PathLike[str]) -> Path:
    """Three panels: held-out accuracy of the policy at the end of each round (95% intervals over problems) with
    the single long run's final accuracy; per round the retrained PRM's F1 vs round 0's stale PRM's; and steps
    per completion, the hacking signal that explains a falling accuracy under a min-form PRM reward."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(15, 4.2))
    FigureCanvasAgg(fig)
    left, right, steps = fig.subplots(1, 3)
    ks = [r["round"] for r in rounds]
    start = rounds[0]["policy_acc_before"] if rounds else None
    xs = [-1, *ks] if start is not None else ks
    ys = [start, *[r["policy_acc"] for r in rounds]] if start is not None else [r["policy_acc"] for r in rounds]
    errs = [(0.0, 0.0)] * (start is not None) + [_err(r["policy_acc"], r.get("policy_acc_ci")) for r in rounds]
    left.errorbar(xs, ys, yerr=list(zip(*errs, strict=True)) if errs else None, marker="o", capsize=3,
                  label="flywheel (PRM retrained each round)")
    if single:
        lo, hi = _err(single["policy_acc"], single.get("policy_acc_ci"))
        left.errorbar([ks[-1] + 0.15], [single["policy_acc"]], yerr=[[lo], [hi]], marker="s", capsize=3,
                      color="C3", label="one long run, round-0 PRM, same RL steps")
    left.set_xticks(xs, ["start" if x < 0 else str(x) for x in xs])
    left.set_xlabel("end of round")
    left.set_title("policy: held-out answer accuracy (95% CI)", fontsize="medium")
    left.grid(alpha=0.3)
    left.legend(fontsize="small")
    right.plot(ks, [_value(r["prm_f1_fresh"]) for r in rounds], marker="o", label="retrained PRM (fresh)")
    right.plot(ks, [_value(r["prm_f1_stale"]) for r in rounds], marker="s", label="round-0 PRM (stale)")
    right.set_xticks(ks, [str(k) for k in ks])
    right.set_xlabel("round (its own policy's held-out samples)")
    right.set_title("PRM ProcessBench F1 on the round's samples", fontsize="medium")
    right.set_ylim(0, 1)
    right.grid(alpha=0.3)
    right.legend(fontsize="small")
    starts = [rounds[0]["steps_before"]] if rounds and rounds[0].get("steps_before") is not None else []
    steps.plot(xs[-len(rounds) - len(starts):], [*starts, *[r["steps_per_completion"] for r in rounds]], marker="o",
               label="flywheel")
    if single and single.get("steps_per_completion") is not None:
        steps.plot([ks[-1] + 0.15], [single["steps_per_completion"]], marker="s", color="C3", linestyle="",
                   label="one long run")
    steps.set_xticks(xs, ["start" if x < 0 else str(x) for x in xs])
    steps.set_xlabel("end of round")
    steps.set_title("steps per completion (held-out)", fontsize="medium")
    steps.grid(alpha=0.3)
    steps.legend(fontsize="small")
    fig.tight_layout()
    return save_png(fig, path)
