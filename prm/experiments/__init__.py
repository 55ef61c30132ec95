"""Experiments that compose sibling stages: the label-source comparison reads the labeling audit, builds training
sets, trains a PRM per label source and evaluates each. No stage imports this package. (The RL arms and search at
equal budgets stay in ``prm.rl`` and ``prm.search``: each runs one stage over the layers below it.)"""

from prm.experiments.label_sources import (
    VERSUS_TRUTH,
    ComparisonConfig,
    bon_curves,
    compare_label_sources,
    comparison_markdown,
    comparison_table,
)
from prm.experiments.pooled import pooled_comparison, with_truth_differences
from prm.experiments.reading_baselines import (
    IMPLICIT_PRM,
    POLICY_LOGLIK,
    STEP_IMPLICIT_PRM,
    implicit_prm_runs,
    policy_loglik_runs,
)

__all__ = [
    "IMPLICIT_PRM",
    "POLICY_LOGLIK",
    "STEP_IMPLICIT_PRM",
    "VERSUS_TRUTH",
    "ComparisonConfig",
    "bon_curves",
    "compare_label_sources",
    "comparison_markdown",
    "comparison_table",
    "implicit_prm_runs",
    "policy_loglik_runs",
    "pooled_comparison",
    "with_truth_differences",
]
