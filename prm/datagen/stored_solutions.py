"""Readers of one (source, day) partition that the later stages label: the policy's stored solutions."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from prm.datagen.synthetic import is_synthetic
from prm.datagen.targets import SolutionToLabel
from warehouse import Warehouse

# Tables whose partition rows describe the partition's solutions (label_audit is a per-method report).
DERIVED_TABLES = ("rollouts", "step_labels", "judgments", "verifications")


def replace_solutions(wh: Warehouse, solutions: Sequence[Mapping[str, Any]], steps: Sequence[Mapping[str, Any]], *,
                      source: str, day: str, run_id: str) -> int:
    """Replace the partition's solutions and steps; returns how many derived rows went first (a killed run then
    leaves old solutions without labels, never labels of solutions that are gone)."""
    derived = sum(wh.delete_partition(table, source, day) for table in DERIVED_TABLES)
    kw = {"source": source, "day": day, "run_id": run_id, "replace": True}
    wh.write("solutions", list(solutions), writer="solutions", **kw)
    wh.write("steps", list(steps), writer="solutions", **kw)
    return derived


def policy_solutions(wh: Warehouse, source: str, day: str) -> list[dict[str, Any]]:
    """The partition's ``solutions`` rows a policy wrote (synthetic rows left out), in stored order."""
    return [s for s in wh.read_partition("solutions", source, day).to_pylist() if not is_synthetic(s["model"])]


def solutions_to_label(wh: Warehouse, source: str, day: str, prompt: Callable[[str], str]) -> list[SolutionToLabel]:
    """Every ok policy-sampled solution of the partition with its steps, prompt and gold answer."""
    problems = {p["problem_id"]: p for p in wh.read_partition("problems", source, day).to_pylist()}
    steps: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in wh.read_partition("steps", source, day).to_pylist():
        steps[row["solution_id"]].append(row)
    return [
        SolutionToLabel.from_rows(s, steps[s["solution_id"]], prompt(problems[s["problem_id"]]["question"]),
                                  problems[s["problem_id"]]["gold_answer"])
        for s in policy_solutions(wh, source, day)
        if s["status"] == "ok" and steps[s["solution_id"]]
    ]


def first_errors_truth(wh: Warehouse, source: str, day: str) -> dict[str, int]:
    """solution_id -> exact first wrong step (-1 = none) of the partition's solutions that have one."""
    return {s["solution_id"]: s["first_error_truth"] for s in wh.read_partition("solutions", source, day).to_pylist()
            if s.get("first_error_truth") is not None}
