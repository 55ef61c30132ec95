"""Scoring steps with a PRM folder of any declared step-tag convention (this project's, Qwen2.5-Math-PRM's,
Math-Shepherd's), one solution or batches, by transformers or by vLLM's pooling runner, an LM-head PRM step by
step from its prefix's cached keys/values (:class:`IncrementalScorer`), and the ``step_scores`` warehouse rows.
Every PRM kind (:data:`PRM_KINDS`) loads into a :class:`Scorer`."""

from prm.scoring.base import context_of
from prm.scoring.config import ENGINES, cuda_bf16, resolve_dtype
from prm.scoring.implicit_scorer import (
    IMPLICIT_SCORES,
    ImplicitPRMScorer,
    StepAssessment,
    assess_batch,
    implicit_scores,
    implicit_step_readings,
    implicit_step_rewards,
    is_lm_head_folder,
    token_log_ratios,
)
from prm.scoring.incremental import IncrementalScorer
from prm.scoring.kinds import PRM_KINDS, prm_kind, trainable_kinds
from prm.scoring.protocol import Scorer
from prm.scoring.reading import (
    LOGLIK_AGGREGATIONS,
    Encoded,
    encode_solution,
    loglik_scores,
    right_padded,
    step_logliks,
    token_logprobs,
)
from prm.scoring.scorer import ScorerConfig, load_prm
from prm.scoring.vllm_scorer import vllm_installed
from prm.scoring.warehouse_rows import step_score_rows

__all__ = [
    "ENGINES",
    "IMPLICIT_SCORES",
    "LOGLIK_AGGREGATIONS",
    "PRM_KINDS",
    "Encoded",
    "ImplicitPRMScorer",
    "IncrementalScorer",
    "Scorer",
    "ScorerConfig",
    "StepAssessment",
    "assess_batch",
    "context_of",
    "cuda_bf16",
    "encode_solution",
    "implicit_scores",
    "implicit_step_readings",
    "implicit_step_rewards",
    "is_lm_head_folder",
    "load_prm",
    "loglik_scores",
    "prm_kind",
    "resolve_dtype",
    "right_padded",
    "step_logliks",
    "step_score_rows",
    "token_log_ratios",
    "token_logprobs",
    "trainable_kinds",
    "vllm_installed",
]
