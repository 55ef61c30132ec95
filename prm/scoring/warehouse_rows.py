"""PRM scores of warehouse steps as rows of the ``step_scores`` table (model, solution, step, score)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from prm.scoring.scorer import PRMScorer

STEP_KEYS = ("solution_id", "problem_id", "step_idx", "text", "question")
EXAMPLE_QUERY = ("SELECT st.solution_id, st.problem_id, st.step_idx, st.text, p.question "
                 "FROM steps st JOIN problems p USING (problem_id)")


def score_rows_for_warehouse(scorer: PRMScorer, model_version: str, rows: Iterable[Mapping[str, Any]],
                             batch_size: int | None = None) -> list[dict[str, Any]]:
    """Score every solution in ``rows`` (one row per step, keys ``STEP_KEYS``) and return ``step_scores`` rows.

    ``model_version`` is the PRM's ``prm.models.model_version(folder)``, so scores of a retrained PRM never
    mix with the old one's. Rows may come in any order; a solution whose step indices are not 0..n-1 raises
    (a missing step would shift every later score onto the wrong step).

    >>> class Half:  # any object with PRMScorer.score_batch's signature
    ...     def score_batch(self, items, batch_size=None):
    ...         return [[0.5] * len(steps) for _, steps in items]
    >>> row = {"solution_id": "s0", "problem_id": "p0", "step_idx": 0, "text": "1+1 = 2", "question": "1+1 ="}
    >>> score_rows_for_warehouse(Half(), "prm@1a2b", [row])
    [{'model': 'prm@1a2b', 'solution_id': 's0', 'problem_id': 'p0', 'step_idx': 0, 'score': 0.5}]
    """
    solutions: dict[str, dict[str, Any]] = {}
    for n, row in enumerate(rows):
        missing = [k for k in STEP_KEYS if k not in row]
        if missing:
            raise ValueError(f"row {n} lacks {missing}; select them, e.g. {EXAMPLE_QUERY}")
        sol = solutions.setdefault(row["solution_id"], {"problem_id": row["problem_id"],
                                                        "question": row["question"], "steps": {}})
        if row["step_idx"] in sol["steps"]:
            raise ValueError(f"solution {row['solution_id']} has step {row['step_idx']} twice; deduplicate the query")
        sol["steps"][int(row["step_idx"])] = row["text"]
    items = []
    for sid, sol in solutions.items():
        if sorted(sol["steps"]) != list(range(len(sol["steps"]))):
            raise ValueError(f"solution {sid} has steps {sorted(sol['steps'])}, not 0..{len(sol['steps']) - 1}; "
                             "select every step of each solution")
        items.append((sol["question"], [sol["steps"][k] for k in range(len(sol["steps"]))]))
    scores = scorer.score_batch(items, batch_size=batch_size)
    return step_score_rows(model_version, [{"solution_id": sid, **sol} for sid, sol in solutions.items()], scores)


def step_score_rows(model_version: str, solutions: Sequence[Mapping[str, Any]],
                    scores: Sequence[Sequence[float]]) -> list[dict[str, Any]]:
    """``step_scores`` rows of ``solutions`` (each with ``solution_id`` and ``problem_id``) and their per-step
    ``scores``, in order: the one place such rows are built.

    >>> step_score_rows("prm@1a2b", [{"solution_id": "s0", "problem_id": "p0"}], [[0.25, 0.5]])[1]
    {'model': 'prm@1a2b', 'solution_id': 's0', 'problem_id': 'p0', 'step_idx': 1, 'score': 0.5}
    """
    return [{"model": model_version, "solution_id": sol["solution_id"], "problem_id": sol["problem_id"],
             "step_idx": k, "score": float(score)}
            for sol, step_scores in zip(solutions, scores, strict=True) for k, score in enumerate(step_scores)]
