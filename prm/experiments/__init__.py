"""Experiments that compose sibling stages: the label-source comparison reads the labeling audit, builds training
sets, trains a PRM per label source and evaluates each. No stage imports this package. (The RL arms and search at
equal budgets stay in ``prm.rl`` and ``prm.search``: each runs one stage over the layers below it.)"""

from prm.experiments.label_sources import (
    ComparisonConfig,
    bon_curves,
    compare_label_sources,
    comparison_markdown,
    comparison_table,
)
from prm.experiments.pooled import with_truth_differences

__all__ = [
    "ComparisonConfig",
    "bon_curves",
    "compare_label_sources",
    "comparison_markdown",
    "comparison_table",
    "with_truth_differences",
]
