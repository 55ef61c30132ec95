"""Figures of a PRM evaluation: best-of-N accuracy against N, and the label-source comparison.

Figures are built on :class:`matplotlib.figure.Figure` with the Agg canvas, never ``pyplot``: pyplot keeps
global state and picks a GUI backend, neither safe in Dagster's worker threads. Each PNG is written to a
temporary sibling and renamed over the target, so a reader never sees half a file.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from prm.best_of_n import AGGREGATIONS, MAJORITY, ORACLE, RANDOM, VOTE_PREFIX, BestOfN
from prm.files import atomic_write

DPI = 120  # legible in a README at the default 6.4 x 4.8 inch size, ~100 KB
REFERENCE_STYLE = {MAJORITY: "--", RANDOM: ":", ORACLE: "-."}  # references dashed, PRM aggregations solid


def plot_best_of_n(curve: Sequence[BestOfN], path: str | os.PathLike[str], *, title: str = "Best-of-N") -> Path:
    """Test accuracy against N for each aggregation and for majority vote, random pick and the oracle.

    ``curve`` is :func:`prm.best_of_n.picks.bon_curve`'s output; the aggregation chosen on validation at
    the largest N is marked in the legend. Returns ``path``.
    """
    if not curve:
        raise ValueError("plot_best_of_n got no points; pass bon_curve(val, test, ns) with at least one n")
    points = sorted(curve, key=lambda b: b.n)
    ns = [b.n for b in points]
    chosen = points[-1].chosen
    fig = Figure(figsize=(6.4, 4.8))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    for method in (*AGGREGATIONS, MAJORITY, RANDOM, ORACLE):
        label = f"PRM {method}" + (" (chosen)" if method == chosen else "") if method in AGGREGATIONS else method
        ax.plot(ns, [b.accuracy[method] for b in points], REFERENCE_STYLE.get(method, "-"), marker="o",
                label=label, linewidth=2.5 if method == chosen else 1.5)
    _finish_n_axes(ax, points, f"{title} ({points[-1].n_problems} problems at N={ns[-1]})", "small")
    return save_png(fig, path)


def plot_best_of_n_by_scorer(curves: Mapping[str, Sequence[BestOfN]], path: str | os.PathLike[str], *,
                             title: str = "Best-of-N by PRM") -> Path:
    """Test accuracy against N of each PRM (its aggregation chosen on validation at each N, solid) and of its
    PRM-weighted vote (``vote_min``, dotted), beside majority vote, random pick and the oracle (from the first
    curve: they do not depend on the PRM). Returns ``path``."""
    if not curves or not any(curves.values()):
        raise ValueError("plot_best_of_n_by_scorer got no curves; pass {name: bon_curve(val, test, ns)}")
    fig = Figure(figsize=(6.4, 4.8))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    for i, (name, curve) in enumerate(curves.items()):
        points = sorted(curve, key=lambda b: b.n)
        ns = [b.n for b in points]
        ax.plot(ns, [b.prm for b in points], "-", marker="o", color=f"C{i}", label=f"{name} (chosen on val)")
        ax.plot(ns, [b.accuracy[VOTE_PREFIX + "min"] for b in points], ":", color=f"C{i}",
                label=f"{name} weighted vote")
    points = sorted(next(c for c in curves.values() if c), key=lambda b: b.n)
    ns = [b.n for b in points]
    for method in (MAJORITY, RANDOM, ORACLE):
        ax.plot(ns, [b.accuracy[method] for b in points], REFERENCE_STYLE[method], color="gray", label=method)
    _finish_n_axes(ax, points, f"{title} ({points[-1].n_problems} problems at N={ns[-1]})", "x-small")
    return save_png(fig, path)


def _finish_n_axes(ax: Any, points: Sequence[BestOfN], title: str, legend_size: str) -> None:
    """Accuracy against N on a log-2 axis ticked at each N of ``points``."""
    ns = [b.n for b in points]
    ax.set_xscale("log", base=2)
    ax.set_xticks(ns, [str(n) for n in ns])
    ax.set_xlabel("N (solutions per problem)")
    ax.set_ylabel("accuracy")
    ax.set_ylim(0, 1.02)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=legend_size)


def plot_label_sources(rows: Sequence[Mapping[str, Any]], path: str | os.PathLike[str], *,
                       metrics: Sequence[str] = ("prm_f1", "bon_acc"),
                       title: str = "PRM quality by label source") -> Path:
    """Grouped bars, one group per ``method`` row and one bar per metric (``None`` leaves a gap), with the 95%
    interval as an error bar where the row has ``<metric>_ci``.

    ``rows`` is the label-source comparison table (keys ``method``, ``prm_f1``, ``bon_acc``, ...) on one test
    set. Returns ``path``.
    """
    if not rows:
        raise ValueError("plot_label_sources got no rows; pass the comparison table, one row per label method")
    missing = [m for m in metrics if not any(m in r for r in rows)]
    if missing:
        raise ValueError(f"no row has {missing}; the comparison rows carry {sorted(rows[0])}")
    fig = Figure(figsize=(max(6.4, 1.2 * len(rows) + 2), 4.8))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    width = 0.8 / len(metrics)
    for j, metric in enumerate(metrics):
        values = [math.nan if r.get(metric) is None else float(r[metric]) for r in rows]
        xs = [i + (j - (len(metrics) - 1) / 2) * width for i in range(len(rows))]
        cis = [r.get(f"{metric}_ci") for r in rows]
        yerr = [[0.0 if c is None or math.isnan(v) else max(0.0, v - c[0]) for v, c in zip(values, cis, strict=True)],
                [0.0 if c is None or math.isnan(v) else max(0.0, c[1] - v) for v, c in zip(values, cis, strict=True)]]
        bars = ax.bar(xs, values, width, label=metric, yerr=yerr if any(c for c in cis) else None, capsize=2)
        ax.bar_label(bars, labels=["-" if math.isnan(v) else f"{v:.2f}" for v in values], fontsize="x-small")
    ax.set_xticks(range(len(rows)), [str(r["method"]) for r in rows], rotation=20, ha="right")
    ax.set_ylim(0, 1.1)
    ax.set_ylabel("score")
    ax.set_title(title)
    ax.legend(fontsize="small")
    fig.tight_layout()
    return save_png(fig, path)


def save_png(fig: Figure, path: str | os.PathLike[str]) -> Path:
    """Write ``fig`` as a PNG atomically (temp file + rename): a reader never sees half a plot."""
    return atomic_write(path, lambda fh: fig.savefig(fh, format="png", dpi=DPI))
