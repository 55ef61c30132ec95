"""Scoring steps with a PRM folder of any declared step-tag convention (this project's, Qwen2.5-Math-PRM's,
Math-Shepherd's), one solution or padded batches, and the ``step_scores`` warehouse rows."""

from prm.scoring.scorer import PRMScorer, ScorerConfig, load_prm
from prm.scoring.warehouse_rows import score_rows_for_warehouse

__all__ = ["PRMScorer", "ScorerConfig", "load_prm", "score_rows_for_warehouse"]
