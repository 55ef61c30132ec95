"""Accuracy against the generated-token budget, one line per search method, with its 95% interval as a band.

Built on a :class:`matplotlib.figure.Figure` with the Agg canvas and written by ``prm.reports.plots.save_png``
(atomic), as every figure of the project.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from prm.reports import save_png


def plot_accuracy_vs_budget(methods: Sequence[Mapping[str, Any]], path: str | os.PathLike[str], *,
                            title: str = "PRM-guided search", total_tokens: bool = False) -> Path:
    """``methods``: benchmarks/search.py's rows (``method``, ``budget``, ``accuracy``, ``accuracy_ci``, optional
    ``set``: one line per set and method), x = the tokens each really spent (``mean_generated_tokens``, else the
    budget), plus the tokens its PRM read (``prm_tokens``) with ``total_tokens``. Returns ``path``."""
    if not methods:
        raise ValueError("plot_accuracy_vs_budget got no rows; pass the benchmark's 'methods' list")
    fig = Figure(figsize=(6.4, 4.8))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    sets = list(dict.fromkeys(m.get("set") for m in methods))
    for group in dict.fromkeys((m.get("set"), m["method"]) for m in methods):
        rows = sorted((m for m in methods if (m.get("set"), m["method"]) == group), key=lambda m: m["budget"])
        xs = [(m.get("mean_generated_tokens") or m["budget"]) + (m.get("prm_tokens", 0) if total_tokens else 0)
              for m in rows]
        label = group[1] if len(sets) == 1 else f"{group[0]}: {group[1]}"
        line, = ax.plot(xs, [m["accuracy"] for m in rows], marker="o", label=label)
        ax.fill_between(xs, [m["accuracy_ci"][0] for m in rows], [m["accuracy_ci"][1] for m in rows],
                        color=line.get_color(), alpha=0.12)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("generated + PRM tokens per problem (mean)" if total_tokens
                  else "generated tokens per problem (mean spent)")
    ax.set_ylabel("accuracy (95% bootstrap band over problems)")
    ax.set_ylim(0, 1)
    ax.set_title(title)
    ax.legend()
    return save_png(fig, path)
