"""Read back the latest run of an evaluation experiment from the ``prm_evaluations`` table (for checks)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from warehouse import connect

_LATEST_F1_SQL = """
SELECT model, value, json_extract_string(detail_json, '$.chosen_on') AS chosen_on FROM prm_evaluations
WHERE metric = 'processbench_f1' AND experiment = $e
  AND run_id = (SELECT run_id FROM prm_evaluations WHERE experiment = $e ORDER BY created_at DESC LIMIT 1)
"""


@dataclass(frozen=True)
class ScorerF1:
    """One scorer (a PRM or a baseline) of the latest run: its ProcessBench F1 and where its threshold came from."""

    model: str
    value: float | None
    chosen_on: str | None  # "validation", or why the default applied


def latest_f1(root: str | Path, experiment: str) -> list[ScorerF1]:
    """Every scorer's ProcessBench F1 in the latest run of ``experiment`` (``prm_evaluation`` or
    ``label_source_comparison``), in stored order."""
    return [ScorerF1(*row) for row in connect(root).execute(_LATEST_F1_SQL, {"e": experiment}).fetchall()]
