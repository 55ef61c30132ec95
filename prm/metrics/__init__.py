"""Pure metrics: numbers in, figures and 95% intervals out (numpy only; importing it loads no torch, no matplotlib).

:mod:`~prm.metrics.stats` (F1, ROC-AUC, bootstrap intervals), :mod:`~prm.metrics.processbench` (ProcessBench's
official score and the validation/report parts of a split) and :mod:`~prm.metrics.sensitivity` (does a PRM read the
step it scores). The metrics of PRM-scored solutions build on these: :mod:`prm.first_error`, :mod:`prm.best_of_n`.
"""

from prm.metrics.processbench import REPORT, VALIDATION, choice_part, official_score
from prm.metrics.sensitivity import (
    Sensitivity,
    SiblingPair,
    Siblings,
    paired_sensitivity_difference,
    pooled_sensitivity,
    score_pairs,
    sibling_pairs,
    step_sensitivity,
)
from prm.metrics.stats import (
    bootstrap_mean_ci,
    f1_difference_ci,
    first_error_accuracies,
    gap_closed,
    harmonic_mean,
    paired_bootstrap_diff_ci,
    problem_bootstrap_ci,
    processbench_f1,
    ratio,
    roc_auc,
    step_f1,
)

__all__ = [
    "REPORT",
    "VALIDATION",
    "Sensitivity",
    "SiblingPair",
    "Siblings",
    "bootstrap_mean_ci",
    "choice_part",
    "f1_difference_ci",
    "first_error_accuracies",
    "gap_closed",
    "harmonic_mean",
    "official_score",
    "paired_bootstrap_diff_ci",
    "paired_sensitivity_difference",
    "pooled_sensitivity",
    "problem_bootstrap_ci",
    "processbench_f1",
    "ratio",
    "roc_auc",
    "score_pairs",
    "sibling_pairs",
    "step_f1",
    "step_sensitivity",
]
