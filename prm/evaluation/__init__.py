"""Evaluation of step labels and PRMs: the metrics the label audit and PRM evaluation share."""

from prm.evaluation.metrics import (
    f1_difference_ci,
    first_error_accuracies,
    harmonic_mean,
    processbench_f1,
    ratio,
    step_f1,
)

__all__ = ["f1_difference_ci", "first_error_accuracies", "harmonic_mean", "processbench_f1", "ratio", "step_f1"]
