"""The RL comparison: every arm under one config, its table, warehouse rows and plot.

Figures use :class:`matplotlib.figure.Figure` on the Agg canvas, never ``pyplot`` (global state and a GUI
backend are unsafe in Dagster's worker threads), and each file is written beside its target and renamed over
it, so a reader never sees half a file (as :mod:`prm.reports.plots`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prm.files import atomic_write_text
from prm.format import cell, markdown_table
from prm.rl.config import RLRunConfig
from prm.rl.constants import PLOT_FILE, SUMMARY_FILE, TABLE_FILE
from prm.rl.grpo import ArmResult, HeldOut, Progress, accuracy_gain_ci, load_result, run_grpo, run_key
from prm.tasks import ArithmeticProblem
from warehouse import Warehouse, connect

# Held-out fields written per difficulty and pooled: prm.policy.EvalRow's rates and counts worth a curve.
EVAL_FIELDS = ("answer_accuracy", "step_error_rate", "mean_steps", "mixed_share")
# Curve fields written per step (prm.rl.grpo.CurvePoint), named train/<field> in the warehouse.
CURVE_FIELDS = ("reward", "reward_std", "outcome_reward", "process_reward", "min_step_score", "n_steps",
                "completion_length", "clipped_ratio", "kl", "entropy", "prm_loss", "prm_accuracy")
# Held-out curve fields (prm.rl.curve.HeldOutPoint), named heldout/<field> in the warehouse at every measured step
# (step 0 and the last included); the before/after eval/* rows stay as they were.
HELDOUT_FIELDS = ("accuracy", "mean_steps", "mean_chars", "prm_mean_score", "prm_min_score", "online_step_auc",
                  "online_mean_score", "step_error", "flawed_share")
HACKED_METRIC = "run/hacked"  # 1.0 when the hack rule (prm.rl.curve.hacked_at) fired, at the step it fired, else 0.0


@dataclass(frozen=True)
class Comparison:
    """Every arm's result plus where the table and the plot were written."""

    config: RLRunConfig
    results: tuple[ArmResult, ...]
    markdown: str  # comparison_markdown(results)
    plot: Path | None

    def table(self) -> list[dict[str, Any]]:
        """One summary row per arm (:meth:`prm.rl.grpo.ArmResult.summary`)."""
        return [r.summary() for r in self.results]

    def metric_rows(self) -> list[dict[str, Any]]:
        """``rl_metrics`` rows of every arm (see :func:`metric_rows`)."""
        return [row for r in self.results for row in metric_rows(r)]


def _held_rows(arm: str, step: int, held: HeldOut) -> list[dict[str, Any]]:
    rows = []
    for r in held.table.rows:
        suffix = "" if r.n_ops == 0 else f"/ops={r.n_ops}"
        rows += [{"arm": arm, "step": step, "metric": f"eval/{name}{suffix}", "value": float(getattr(r, name))}
                 for name in EVAL_FIELDS if getattr(r, name) is not None]  # step error: None without step truth
    if (ci := held.accuracy_ci()) is not None:  # 95% bootstrap over held-out problems
        rows += [{"arm": arm, "step": step, "metric": f"eval/answer_accuracy_ci_{end}", "value": value}
                 for end, value in zip(("low", "high"), ci, strict=True)]
    if (flawed := held.flawed_share) is not None:  # right answers with a wrong step (exact truth), 95% over problems
        rows.append({"arm": arm, "step": step, "metric": "eval/flawed_share", "value": flawed})
        rows += [{"arm": arm, "step": step, "metric": f"eval/flawed_share_ci_{end}", "value": value}
                 for end, value in zip(("low", "high"), held.flawed_ci() or (), strict=False)]
    rows.append({"arm": arm, "step": step, "metric": "eval/mean_chars", "value": held.mean_chars})
    rows.append({"arm": arm, "step": step, "metric": "eval/min_step_score", "value": held.mean_min_step_score})
    return rows


def metric_rows(result: ArmResult) -> list[dict[str, Any]]:
    """Warehouse ``rl_metrics`` rows (arm, step, metric, value) of one arm: held-out ``eval/*`` at step 0
    (before) and at the last step (after), ``train/*`` per logged step, ``run/*`` times at the last step.
    ``eval/answer_accuracy_ci_low``/``_high``: the accuracy's 95% interval, and at the last step
    ``eval/answer_accuracy_gain_ci_low``/``_high``: the paired interval of after minus before, both resampling
    held-out problems (left out for results saved without per-problem accuracy). ``eval/flawed_share`` (+ ``_ci_low``/
    ``_high``): the share of right answers with a wrong step by exact truth (generated arithmetic only). Non-finite
    and missing values are left out (the warehouse refuses NaN). ``heldout/*``: the held-out curve
    (:attr:`ArmResult.heldout_points`); ``run/hacked``: 1.0 at the step the hack rule fired, else 0.0 at the last
    step."""
    rows = _held_rows(result.arm, 0, result.before) + _held_rows(result.arm, result.steps, result.after)
    if (gain := accuracy_gain_ci(result.before, result.after)) is not None:
        rows += [{"arm": result.arm, "step": result.steps, "metric": f"eval/answer_accuracy_gain_ci_{end}",
                  "value": value} for end, value in zip(("low", "high"), gain, strict=True)]
    for point in result.curve:
        rows += [{"arm": result.arm, "step": point.step, "metric": f"train/{name}", "value": getattr(point, name)}
                 for name in CURVE_FIELDS if getattr(point, name) is not None]
    for held in result.heldout_points:
        rows += [{"arm": result.arm, "step": held.step, "metric": f"heldout/{name}",
                  "value": float(getattr(held, name))} for name in HELDOUT_FIELDS if getattr(held, name) is not None]
    hacked = result.hacked_at
    rows.append({"arm": result.arm, "step": result.steps if hacked is None else hacked, "metric": HACKED_METRIC,
                 "value": 0.0 if hacked is None else 1.0})
    rows += [{"arm": result.arm, "step": result.steps, "metric": "run/train_s", "value": result.train_s},
             {"arm": result.arm, "step": result.steps, "metric": "run/wall_s", "value": result.wall_s}]
    return rows


def _pair(before: float | None, after: float | None, digits: int) -> str:
    """``before → after``, each to ``digits`` decimals (``-`` for None)."""
    return " → ".join(cell(None if v is None else float(v), digits) for v in (before, after))


def _interval(ci: Sequence[float] | None, digits: int, sign: str = "") -> str:
    """`` [low, high]`` of a 95% interval, empty when there is none."""
    return "" if ci is None else f" [{ci[0]:{sign}.{digits}f}, {ci[1]:{sign}.{digits}f}]"


def _accuracy_cells(s: dict[str, Any]) -> dict[str, str]:
    """``before [ci] → after [ci]`` and ``gain [ci]`` of a summary row (the gain's interval is paired)."""
    acc = (f"{s['acc_before']:.3f}{_interval(s['acc_before_ci'], 2)} → "
           f"{s['acc_after']:.3f}{_interval(s['acc_after_ci'], 2)}")
    return {"answer acc [95% CI]": acc,
            "acc gain [95% CI]": f"{s['acc_after'] - s['acc_before']:+.3f}{_interval(s['acc_gain_ci'], 3, '+')}"}


def comparison_markdown(results: Sequence[ArmResult]) -> str:
    """The comparison as a markdown table: held-out numbers (pooled over eval_ops) before → after, the
    training reward at the start → end, and time. Answer accuracy carries 95% intervals and its gain the
    paired interval of after minus before, all resampling held-out problems (:meth:`ArmResult.summary`).

    Hacking reads off three columns: steps per completion and length rising while accuracy does not, and the
    PRM's lowest step score rising with them; ``hacked`` says where the rule of :func:`prm.rl.curve.hacked_at`
    fired."""
    rows = []
    for r in results:
        s = r.summary()
        rows.append({"arm": r.arm, "steps": r.steps, **_accuracy_cells(s),
                     "step error": _pair(s["step_err_before"], s["step_err_after"], 3),
                     "steps/completion": _pair(s["steps_before"], s["steps_after"], 2),
                     "chars": _pair(s["chars_before"], s["chars_after"], 0),
                     "PRM min step": _pair(s["prm_min_before"], s["prm_min_after"], 3),
                     "train reward": _pair(s["reward_first"], s["reward_last"], 3), "train s": f"{s['train_s']:.0f}",
                     "hacked": "-" if s["hacked_at"] is None else f"at step {s['hacked_at']}"})
    return markdown_table(rows, ["arm", "steps", "answer acc [95% CI]", "acc gain [95% CI]", "step error",
                                 "steps/completion", "chars", "PRM min step", "train reward", "train s", "hacked"],
                          render=str)


def _smooth(values: list[float], window: int) -> list[float]:
    out, total = [], 0.0
    for i, v in enumerate(values):
        total += v - (values[i - window] if i >= window else 0.0)
        out.append(total / min(i + 1, window))
    return out


def _error_bars(held: Sequence[HeldOut]) -> list[list[float]] | None:
    """Matplotlib ``yerr`` (below, above) of each accuracy's 95% interval; None when one has no interval."""
    cis = [h.accuracy_ci() for h in held]
    if any(ci is None for ci in cis):
        return None
    # max(0, ...): matplotlib refuses a negative error, and a percentile interval need not hold its mean
    return [[max(0.0, h.accuracy - ci[0]) for h, ci in zip(held, cis, strict=True)],
            [max(0.0, ci[1] - h.accuracy) for h, ci in zip(held, cis, strict=True)]]


def plot_arms(results: Sequence[ArmResult], path: str | os.PathLike[str], *,
              title: str = "GRPO arms: same policy, data and budget; only the reward differs") -> Path:
    """Six panels: the training reward, answer accuracy on training batches, the PRM's lowest step score,
    completion length and steps per completion against step (moving averages), and held-out accuracy before
    and after per arm with its 95% interval over problems (against step, when the runs measured a held-out
    curve). Returns ``path``."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    if not results:
        raise ValueError("plot_arms got no results; run at least one arm first")
    fig = Figure(figsize=(13, 7.5))
    FigureCanvasAgg(fig)
    axes = fig.subplots(2, 3)
    panels = [("reward", "reward (the arm's own scale)"), ("outcome_reward", "answer accuracy (train batches)"),
              ("min_step_score", "PRM lowest step score"), ("completion_length", "completion length (tokens)"),
              ("n_steps", "steps per completion")]
    for ax, (name, label) in zip(axes.flat, panels, strict=False):
        for r in results:
            pts = [(p.step, getattr(p, name)) for p in r.curve if getattr(p, name) is not None]
            if pts:
                window = max(1, len(pts) // 20)
                ax.plot([s for s, _ in pts], _smooth([v for _, v in pts], window), label=r.arm)
        ax.set_xlabel("step")
        ax.set_title(label, fontsize="medium")
        ax.grid(alpha=0.3)
    axes.flat[0].legend(fontsize="small")
    bars = axes.flat[5]
    if any(len(r.heldout_points) > 2 for r in results):  # a held-out curve (eval_every): accuracy against step
        for r in results:
            bars.plot([p.step for p in r.heldout_points], [p.accuracy for p in r.heldout_points], marker="o",
                      label=r.arm)
        bars.set_xlabel("step")
        bars.set_title("held-out answer accuracy", fontsize="medium")
        bars.grid(alpha=0.3)
        fig.suptitle(title)
        fig.tight_layout()
        from prm.reports import save_png

        return save_png(fig, path)
    xs = range(len(results))
    bars.bar([x - 0.2 for x in xs], [r.before.accuracy for r in results], 0.4, label="before", color="0.7",
             yerr=_error_bars([r.before for r in results]))
    bars.bar([x + 0.2 for x in xs], [r.after.accuracy for r in results], 0.4, label="after",
             yerr=_error_bars([r.after for r in results]))
    bars.set_xticks(list(xs), [r.arm for r in results])
    bars.set_ylim(0, 1)
    bars.set_title("held-out answer accuracy (95% CI over problems)", fontsize="medium")
    bars.legend(fontsize="small")
    fig.suptitle(title)
    fig.tight_layout()
    from prm.reports import save_png

    return save_png(fig, path)


def compare_arms(policy_dir: str | Path, prm_dir: str | Path, config: RLRunConfig, out_dir: str | Path, *,
                 progress: Progress | None = None, plot: bool = True, resume: bool = False,
                 problems: Sequence[ArithmeticProblem] | None = None) -> Comparison:
    """Run every arm of ``config`` from the same policy with the same budget, then write
    ``comparison.md``, ``comparison.json`` and (with ``plot``) ``rl_arms.png`` under ``out_dir``; each arm
    writes its own folder ``<out_dir>/<arm>``. The starting policy is evaluated once and shared. ``problems``:
    a pool every arm draws its held-out and training problems from (see :func:`prm.rl.run_grpo`).

    ``resume``: an arm whose ``result.json`` was written under the same policy, PRM and config
    (:func:`prm.rl.grpo.run_key`) is read back instead of run again, so a killed comparison continues.

    Example (needs a policy and a PRM folder)::

        cmp = compare_arms(resolve_model("arith-policy"), "models/prm", RLRunConfig(), "models/rl")
        print(cmp.markdown)
    """
    out = Path(out_dir)
    results: list[ArmResult] = []
    before: HeldOut | None = None
    for arm in config.arms:
        result = load_result(out / arm, run_key(policy_dir, prm_dir, config, arm, problems)) if resume else None
        if progress:
            progress(f"arm {arm}: " + ("finished earlier, read back" if result else f"{config.steps} GRPO steps"))
        if result is None:
            result = run_grpo(policy_dir, prm_dir, arm, config, out / arm, before=before, problems=problems,
                              progress=progress)
        before = result.before
        results.append(result)
    markdown = comparison_markdown(results)
    figure = plot_arms(results, out / PLOT_FILE) if plot else None
    atomic_write_text(out / TABLE_FILE, markdown + "\n")
    summary = {"config": config.to_dict(), "arms": [r.summary() for r in results],
               "plot": str(figure) if figure else None}
    atomic_write_text(out / SUMMARY_FILE, json.dumps(summary, indent=1))
    return Comparison(config=config, results=tuple(results), markdown=markdown, plot=figure)


def latest_run_metrics(wh: Warehouse) -> list[tuple[str, int, str, float]]:
    """(arm, step, metric, value) rows of the latest RL run's held-out accuracy and reward curve (none when the
    ``rl_metrics`` table is empty)."""
    if not wh.files("rl_metrics"):
        return []
    return connect(wh.root).execute(
        "SELECT arm, step, metric, value FROM rl_metrics WHERE (metric = 'eval/answer_accuracy' OR metric = "
        "'train/reward') AND run_id = (SELECT run_id FROM rl_metrics ORDER BY created_at DESC LIMIT 1)").fetchall()


def latest_hacked(wh: Warehouse) -> dict[str, int | None]:
    """Per arm of the latest RL run, the step the hack rule fired at (None: not hacked); arms written before the
    rule existed have no ``run/hacked`` row and are left out."""
    if not wh.files("rl_metrics"):
        return {}
    rows = connect(wh.root).execute(
        "SELECT arm, step, value FROM rl_metrics WHERE metric = ? AND run_id = (SELECT run_id FROM rl_metrics "
        "ORDER BY created_at DESC LIMIT 1)", [HACKED_METRIC]).fetchall()
    return {arm: int(step) if value >= 0.5 else None for arm, step, value in rows}
