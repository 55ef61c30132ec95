"""Automatic step labels: Monte-Carlo rollouts (Math-Shepherd), OmegaPRM binary search, and their audit.

Every labeler has the same call, ``get_labeler(name, config).label(solutions, sampler, skip=...)``,
and returns a :class:`LabelRun` whose rows fit ``step_labels`` and whose new rollouts fit ``rollouts``.
"""

from prm.evaluation.metrics import f1_difference_ci
from prm.labeling.audit import AuditRow, audit_labels, audit_markdown, predicted_first_errors
from prm.labeling.mc import MCConfig, MCLabeler
from prm.labeling.omega_search import OmegaPRMConfig, QuestionSearch
from prm.labeling.omegaprm import OmegaPRMLabeler
from prm.labeling.registry import LABELERS, get_labeler
from prm.labeling.resume import chunk_by_problem, label_in_chunks
from prm.labeling.sampler import CachedRolloutSampler, backend_sampler
from prm.labeling.types import Labeler, LabelRun, RolloutOutcome, RolloutSampler, StepLabel

__all__ = [
    "LABELERS",
    "AuditRow",
    "CachedRolloutSampler",
    "LabelRun",
    "Labeler",
    "MCConfig",
    "MCLabeler",
    "OmegaPRMConfig",
    "OmegaPRMLabeler",
    "QuestionSearch",
    "RolloutOutcome",
    "RolloutSampler",
    "StepLabel",
    "audit_labels",
    "audit_markdown",
    "backend_sampler",
    "chunk_by_problem",
    "f1_difference_ci",
    "get_labeler",
    "label_in_chunks",
    "predicted_first_errors",
]
