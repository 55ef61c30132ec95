"""A PRM's step scores against first-error truth (pure: numpy, no torch, no matplotlib): the held-out
:class:`ScoredSolution`, ProcessBench F1 at a threshold chosen on validation, step ROC-AUC, their intervals over
problems, and what a table says where solutions carry no step truth."""

from prm.first_error.intervals import f1_ci, paired_f1_difference, pooled_f1, verdict_f1
from prm.first_error.scores import (
    FLAG_ALL,
    NEVER_FLAG,
    UNCHOSEN_THRESHOLD,
    ScoredSolution,
    as_solutions,
    evaluate_processbench,
    first_error_predictions,
    predict_first_error,
    step_auc,
)
from prm.first_error.truth import MISSING_KEY, NO_STEP_TRUTH, has_step_truth, step_truth_note

__all__ = [
    "FLAG_ALL",
    "MISSING_KEY",
    "NEVER_FLAG",
    "NO_STEP_TRUTH",
    "UNCHOSEN_THRESHOLD",
    "ScoredSolution",
    "as_solutions",
    "evaluate_processbench",
    "f1_ci",
    "first_error_predictions",
    "has_step_truth",
    "paired_f1_difference",
    "pooled_f1",
    "predict_first_error",
    "step_auc",
    "step_truth_note",
    "verdict_f1",
]
