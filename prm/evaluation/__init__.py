"""Evaluation of step labels and PRMs: shared metrics, ProcessBench-style PRM evaluation, best-of-N, plots."""

from prm.evaluation.metrics import (
    bootstrap_mean_ci,
    f1_difference_ci,
    first_error_accuracies,
    gap_closed,
    harmonic_mean,
    paired_bootstrap_diff_ci,
    processbench_f1,
    ratio,
    roc_auc,
    step_f1,
)
from prm.evaluation.plots import plot_best_of_n, plot_label_sources
from prm.evaluation.prm_eval import (
    ScoredSolution,
    evaluate_best_of_n,
    evaluate_processbench,
    step_auc,
)
from prm.evaluation.table import evaluation_markdown, evaluation_table

__all__ = [
    "ScoredSolution",
    "bootstrap_mean_ci",
    "evaluate_best_of_n",
    "evaluate_processbench",
    "evaluation_markdown",
    "evaluation_table",
    "f1_difference_ci",
    "first_error_accuracies",
    "gap_closed",
    "harmonic_mean",
    "paired_bootstrap_diff_ci",
    "plot_best_of_n",
    "plot_label_sources",
    "processbench_f1",
    "ratio",
    "roc_auc",
    "step_auc",
    "step_f1",
]
