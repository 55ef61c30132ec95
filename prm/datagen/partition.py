"""Readers of one (source, day) partition that the later stages label: the policy's stored solutions."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

from prm.datagen.synthetic import is_synthetic
from prm.datagen.targets import SolutionToLabel
from warehouse import Warehouse


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
