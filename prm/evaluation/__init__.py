"""The PRM evaluation stage: a PRM folder scored on held-out solutions (:mod:`~prm.evaluation.folder`, imported by
its path: it loads torch), ProcessBench files scored by a PRM or a critic, the perturbation check, the held-out
split and the latest registered F1. The figures come from the pure :mod:`prm.metrics`, :mod:`prm.first_error` and
:mod:`prm.best_of_n`; tables and plots from :mod:`prm.reports`."""

from prm.evaluation.critic import CRITIQUE_TEMPLATE, GenerationCritic
from prm.evaluation.heldout import IN_DISTRIBUTION, heldout_solutions, split_test_sets
from prm.evaluation.latest import latest_f1
from prm.evaluation.perturbations import (
    PerturbationRun,
    columns_from_rows,
    perturbation_columns,
    perturbation_markdown,
    perturbation_report,
    perturbation_run,
    training_negative,
    worst_detection,
)
from prm.evaluation.processbench_data import (
    PROCESSBENCH_EXPERIMENT,
    PROCESSBENCH_SPLITS,
    SHARED_PROCESSBENCH,
    SLICES,
    processbench_files,
    processbench_registry_metrics,
    processbench_rows,
)
from prm.evaluation.processbench_eval import evaluate_processbench_files, load_split, spread

__all__ = [
    "CRITIQUE_TEMPLATE",
    "IN_DISTRIBUTION",
    "PROCESSBENCH_EXPERIMENT",
    "PROCESSBENCH_SPLITS",
    "SHARED_PROCESSBENCH",
    "SLICES",
    "GenerationCritic",
    "PerturbationRun",
    "columns_from_rows",
    "evaluate_processbench_files",
    "heldout_solutions",
    "latest_f1",
    "load_split",
    "perturbation_columns",
    "perturbation_markdown",
    "perturbation_report",
    "perturbation_run",
    "processbench_files",
    "processbench_registry_metrics",
    "processbench_rows",
    "split_test_sets",
    "spread",
    "training_negative",
    "worst_detection",
]
