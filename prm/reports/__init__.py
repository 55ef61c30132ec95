"""Reports of a PRM evaluation: the evaluation table's rows and their markdown, and the best-of-N and label-source
plots (importing it loads matplotlib; the figures themselves come from :mod:`prm.first_error` and
:mod:`prm.best_of_n`)."""

from prm.reports.plots import plot_best_of_n, plot_best_of_n_by_scorer, plot_label_sources, save_png
from prm.reports.table import (
    evaluation_markdown,
    evaluation_table,
    metric_row,
    sensitivity_row,
    sensitivity_text,
    unmeasurable_note,
)

__all__ = [
    "evaluation_markdown",
    "evaluation_table",
    "metric_row",
    "plot_best_of_n",
    "plot_best_of_n_by_scorer",
    "plot_label_sources",
    "save_png",
    "sensitivity_row",
    "sensitivity_text",
    "unmeasurable_note",
]
