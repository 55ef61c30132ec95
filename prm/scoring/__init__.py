"""Scoring steps with a PRM folder of any declared step-tag convention (this project's, Qwen2.5-Math-PRM's,
Math-Shepherd's), one solution or batches, by transformers or by vLLM's pooling runner, an LM-head PRM step by
step from its prefix's cached keys/values (:class:`IncrementalScorer`), and the ``step_scores`` warehouse rows."""

from prm.scoring.implicit_scorer import StepAssessment, assess_batch
from prm.scoring.incremental import IncrementalScorer
from prm.scoring.scorer import PRMScorer, ScorerConfig, load_prm
from prm.scoring.vllm_scorer import VLLMScorer
from prm.scoring.warehouse_rows import score_rows_for_warehouse, step_score_rows

__all__ = ["IncrementalScorer", "PRMScorer", "ScorerConfig", "StepAssessment", "VLLMScorer", "assess_batch",
           "load_prm", "score_rows_for_warehouse", "step_score_rows"]
