"""Automatic step labels: Monte-Carlo rollouts (Math-Shepherd), OmegaPRM binary search, progress, formal
verifiers, the LLM judge, their consensus, and their audit.

Every method the method table (``warehouse/methods.py``) computes is ``get_labeler(name, config)``, registered in
:data:`LABELERS` under the table's name. Solution labelers (:class:`Labeler`) are called
``.label(solutions, engine, skip=...)``: ``engine`` is a :class:`RolloutSampler` for the rollout methods and a
``GenerationBackend`` for the judge. Derived labelers (:class:`DerivedLabeler`: progress, sympy, z3, consensus)
are called ``.label(rows)`` with the partition tables they name in ``reads``. Both return a :class:`LabelRun`
whose rows fit ``step_labels`` (and, for rollout methods, whose new rollouts fit ``rollouts``).
"""

from prm.evaluation.metrics import f1_difference_ci
from prm.labeling.audit import AuditRow, audit_labels, audit_markdown, predicted_first_errors
from prm.labeling.mc import MCConfig, MCLabeler
from prm.labeling.omega_search import OmegaPRMConfig, QuestionSearch
from prm.labeling.omegaprm import OmegaPRMLabeler
from prm.labeling.registry import LABELERS, LabelerSpec, computed_methods, get_labeler, labelers_needing
from prm.labeling.resume import chunk_by_problem, label_in_chunks
from prm.labeling.sampler import CachedRolloutSampler, backend_sampler
from prm.labeling.types import (
    DerivedLabeler,
    Labeler,
    LabelRun,
    PartitionRows,
    RolloutOutcome,
    RolloutSampler,
    StepLabel,
)

__all__ = [
    "LABELERS",
    "AuditRow",
    "CachedRolloutSampler",
    "DerivedLabeler",
    "LabelRun",
    "Labeler",
    "LabelerSpec",
    "MCConfig",
    "MCLabeler",
    "OmegaPRMConfig",
    "OmegaPRMLabeler",
    "PartitionRows",
    "QuestionSearch",
    "RolloutOutcome",
    "RolloutSampler",
    "StepLabel",
    "audit_labels",
    "audit_markdown",
    "backend_sampler",
    "chunk_by_problem",
    "computed_methods",
    "f1_difference_ci",
    "get_labeler",
    "label_in_chunks",
    "labelers_needing",
    "predicted_first_errors",
]
