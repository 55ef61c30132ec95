"""Exact ground truth of generated problems (arithmetic, logic), rebuilt from their warehouse rows."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from prm.format import first_error_of, labels_from_first_error, split_steps
from prm.tasks import ArithmeticProblem, LogicProblem, first_error_index, step_truth
from prm.tasks.logic import step_truth as logic_step_truth


def arithmetic_problem(row: Mapping[str, Any]) -> ArithmeticProblem | None:
    """The generator's problem behind a ``problems`` row, or None for tasks without exact truth."""
    if not str(row.get("task", "")).startswith("arith_") or not row.get("meta_json"):
        return None
    meta = json.loads(row["meta_json"])
    return ArithmeticProblem(
        problem_id=row["problem_id"],
        style=meta["style"],
        question=row["question"],
        expression=meta["expression"],
        gold_steps=tuple(split_steps(row["gold_solution"] or "")),
        intermediates=tuple(meta["intermediates"]),
        answer=int(row["gold_answer"]),
    )


def logic_problem(row: Mapping[str, Any]) -> LogicProblem | None:
    """The generated logic problem behind a ``problems`` row, or None for other tasks."""
    if row.get("task") != "logic" or not row.get("meta_json"):
        return None
    meta = json.loads(row["meta_json"])
    return LogicProblem(problem_id=row["problem_id"], question=row["question"], facts=tuple(meta["facts"]),
                        rules=tuple(meta["rules"]), target=meta["target"],
                        gold_steps=tuple(split_steps(row["gold_solution"] or "")), answer=row["gold_answer"])


def step_truths(row: Mapping[str, Any], steps: Sequence[str]) -> tuple[list[bool | None], int | None]:
    """(per-step truth, first wrong step or -1) of ``steps`` for problem ``row``; Nones where unknown.

    PRM convention: once a step is wrong, every later step is wrong too.
    """
    problem = arithmetic_problem(row)
    if problem is not None:
        return list(step_truth(problem, steps)), first_error_index(problem, steps)
    logic = logic_problem(row)
    if logic is None:
        return [None] * len(steps), None
    first = first_error_of(logic_step_truth(logic, list(steps)))  # local verdicts: one per step
    return labels_from_first_error(len(steps), first), first
