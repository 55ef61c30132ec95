"""Automatic step labels: Monte-Carlo rollouts (Math-Shepherd), OmegaPRM binary search, progress, formal
verifiers, the LLM judge and their consensus, active labels (rollouts only where a PRM is unsure), and the partition
stages that run them and their audits (:mod:`prm.label_audit`).

Every method the method table (``warehouse.methods``) computes is ``get_labeler(name, config)``, registered in
:data:`LABELERS` under the table's name. Solution labelers (:class:`Labeler`) are called
``.label(solutions, engine, skip=...)``: ``engine`` is a :class:`RolloutSampler` for the rollout methods and a
``GenerationBackend`` for the judge. Derived labelers (:class:`DerivedLabeler`: progress, sympy, z3, consensus)
are called ``.label(rows)`` with the partition tables they name in ``reads``. Both return a :class:`LabelRun`
whose rows fit ``step_labels`` (and, for rollout methods, whose new rollouts fit ``rollouts``).
"""

from prm.labeling.active import ActiveConfig
from prm.labeling.agreement import agreement_markdown, pairwise_agreement
from prm.labeling.consensus import POLICIES, ConsensusConfig
from prm.labeling.judge import JudgeConfig, judge_prompt, parse_vote
from prm.labeling.mc import MCConfig
from prm.labeling.omega_search import OmegaPRMConfig
from prm.labeling.partition import (
    PartitionLabelReport,
    audit_partition,
    consensus_partition,
    derive_partition,
    judge_partition,
    label_method_partition,
    label_partition,
    label_progress_partition,
    people_audit_partition,
    verify_partition,
)
from prm.labeling.progress import ProgressConfig
from prm.labeling.readiness import ReadinessThresholds, SolutionCounts
from prm.labeling.reference_check import REFERENCE_METHOD, REFERENCE_TASKS, ReferenceConfig
from prm.labeling.registry import LABELERS, get_labeler
from prm.labeling.sampler import backend_sampler

__all__ = [
    "LABELERS",
    "POLICIES",
    "REFERENCE_METHOD",
    "REFERENCE_TASKS",
    "ActiveConfig",
    "ConsensusConfig",
    "JudgeConfig",
    "MCConfig",
    "OmegaPRMConfig",
    "PartitionLabelReport",
    "ProgressConfig",
    "ReadinessThresholds",
    "ReferenceConfig",
    "SolutionCounts",
    "agreement_markdown",
    "audit_partition",
    "backend_sampler",
    "consensus_partition",
    "derive_partition",
    "get_labeler",
    "judge_partition",
    "judge_prompt",
    "label_method_partition",
    "label_partition",
    "label_progress_partition",
    "pairwise_agreement",
    "parse_vote",
    "people_audit_partition",
    "verify_partition",
]
