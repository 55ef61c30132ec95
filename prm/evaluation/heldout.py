"""Held-out solutions from the warehouse: what every PRM (and baseline) is scored on, the same for all."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from prm.best_of_n import answer_key
from prm.datagen import policy_written_sql
from warehouse import Snapshot, snapshot_connection, source_clause

IN_DISTRIBUTION, EASY_TO_HARD = "in_distribution", "easy_to_hard"  # the two test sets, by gold step count

# Every ok, model-written solution with steps and its ordered steps: each is graded against its problem's gold
# answer (``is_correct``, what best-of-N and the votes read; null = no answer or ungradable, counted wrong), and
# those of generated tasks also carry exact step truth (``first_error``, what the step metrics read). GSM8K and
# MATH solutions have none and are evaluated at the outcome level alone (prm.best_of_n.outcome).
_SOLUTIONS_SQL = f"""
SELECT so.solution_id, so.problem_id, p.question, p.n_gold_steps, so.final_answer, so.is_correct,
       so.first_error_truth AS first_error, so.sample_idx
FROM solutions so JOIN problems p USING (problem_id)
WHERE so.status = 'ok' AND so.n_steps > 0
  AND {policy_written_sql('so.model')} {{source_filter}}
ORDER BY so.problem_id, so.sample_idx, so.solution_id
"""


def heldout_solutions(snapshot: Snapshot, split_of: Any,
                      splits: tuple[str, ...] = ("val", "test"),
                      source: str | tuple[str, ...] | None = None) -> dict[str, list[dict]]:
    """Per split, every model-written solution with steps: ``solution_id, problem_id, question, steps,
    first_error, final_answer, is_correct`` (``first_error`` None where the task has no step truth).
    ``split_of(problem_id, n_gold_steps)`` names a problem's split (e.g. ``prm.training.problem_split`` bound to a
    config), so every label method is scored on the same problems. ``source``: one warehouse source, several, or
    None for every source."""
    con = snapshot_connection(snapshot)
    source_filter, params = source_clause(source)
    cursor = con.execute(_SOLUTIONS_SQL.format(source_filter=source_filter), params)
    names = [d[0] for d in cursor.description]
    rows = [dict(zip(names, values, strict=True)) for values in cursor.fetchall()]
    steps: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for sid, idx, text in con.execute("SELECT solution_id, step_idx, text FROM steps").fetchall():
        steps[sid].append((idx, text))
    out: dict[str, list[dict]] = {s: [] for s in splits}
    for row in rows:
        split = split_of(row["problem_id"], row["n_gold_steps"])
        if split in out:
            row["steps"] = [text for _, text in sorted(steps[row["solution_id"]])]
            row["final_answer"] = answer_key(row["final_answer"])  # "1,234" and "1234" are one vote
            out[split].append(row)
    return out


def split_test_sets(test: list[dict], train_max_steps: int | None) -> dict[str, list[dict]]:
    """The test split as named test sets: ``in_distribution`` (problems of the training lengths) and, with
    ``train_max_steps``, ``easy_to_hard`` (longer problems); an empty set is left out.

    >>> sets = split_test_sets([{"n_gold_steps": 2}, {"n_gold_steps": 5}], train_max_steps=3)
    >>> {name: [s["n_gold_steps"] for s in rows] for name, rows in sets.items()}
    {'in_distribution': [2], 'easy_to_hard': [5]}
    >>> list(split_test_sets([{"n_gold_steps": 5}], None))
    ['in_distribution']
    """
    if train_max_steps is None:
        return {IN_DISTRIBUTION: list(test)} if test else {}
    longer = [s for s in test if s["n_gold_steps"] is None or s["n_gold_steps"] > train_max_steps]
    short = [s for s in test if not (s["n_gold_steps"] is None or s["n_gold_steps"] > train_max_steps)]
    return {name: rows for name, rows in ((IN_DISTRIBUTION, short), (EASY_TO_HARD, longer)) if rows}
