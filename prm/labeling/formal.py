"""Formal step verdicts (SymPy arithmetic, Z3 logic) as ``verifications`` rows and ``step_labels``."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from prm.format import (
    STATUS_LABELED,
    STATUS_UNVERIFIABLE,
    first_error_of,
    labels_from_first_error,
    statuses_from_first_error,
)
from prm.labeling.constants import FORMAL_TIMEOUT_S, LABELER_VERSION
from prm.labeling.types import LabelRun, PartitionRows, StepLabel, derived_run
from verifiers import check_steps

# Which verifier checks the steps of a task; tasks not listed get no formal verdict.
VERIFIER_OF_TASK: dict[str, str] = {"arith_chain": "sympy", "arith_word": "sympy", "gsm8k": "sympy",
                                    "math": "sympy", "logic": "z3"}
_KIND = {"sympy": "arithmetic", "z3": "logic"}


@dataclass(frozen=True)
class FormalRun:
    """Verdict rows for ``verifications`` and label rows for ``step_labels``, with status counts."""

    verifications: list[dict[str, Any]]
    labels: list[dict[str, Any]]
    counts: dict[str, int]


def verify_steps(steps: Sequence[Mapping[str, Any]], task_of: Mapping[str, str],
                 timeout_s: float = FORMAL_TIMEOUT_S) -> FormalRun:
    """Check every step whose problem's task has a verifier; one pool batch per verifier.

    ``task_of`` maps problem_id to task. An unverifiable step gets ``hard_label`` null and status
    ``unverifiable`` (never a guess); steps after an incorrect one are labeled wrong ``by_convention``
    (``verifications`` keeps every raw verdict); the solution's first error is set only when every
    step before the first incorrect one was verified.
    """
    by_verifier: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for step in steps:
        verifier = VERIFIER_OF_TASK.get(task_of.get(step["problem_id"], ""))
        if verifier is not None:
            by_verifier[verifier].append(step)
    verifications, labels = [], []
    counts: dict[str, int] = defaultdict(int)
    for verifier, todo in by_verifier.items():
        verdicts = check_steps([s["text"] for s in todo], timeout_s=timeout_s, kind=_KIND[verifier])
        per_solution: dict[str, dict[int, bool | None]] = defaultdict(dict)
        for step, verdict in zip(todo, verdicts, strict=True):
            counts[verdict.status] += 1
            verifications.append({"solution_id": step["solution_id"], "problem_id": step["problem_id"],
                                  "step_idx": step["step_idx"], "verifier": verifier, "status": verdict.status,
                                  "detail": verdict.detail[:500] or None})
            ok = {"correct": True, "incorrect": False}.get(verdict.status)
            per_solution[step["solution_id"]][int(step["step_idx"])] = ok
        params = json.dumps({"method": verifier, "timeout_s": timeout_s})
        for step, row in zip(todo, verifications[-len(todo):], strict=True):
            hard = per_solution[step["solution_id"]]
            idx = int(step["step_idx"])
            local = [hard[k] for k in sorted(hard)]
            first_wrong = next((k for k, ok in enumerate(local) if ok is False), len(local))
            ok, status = hard[idx], STATUS_UNVERIFIABLE if row["status"] == "unverifiable" else STATUS_LABELED
            if idx > first_wrong:  # the PRM convention: nothing after a wrong step is good
                ok = labels_from_first_error(len(local), first_wrong)[idx]
                status = statuses_from_first_error(len(local), first_wrong)[idx]
            labels.append({"solution_id": step["solution_id"], "problem_id": step["problem_id"],
                           "step_idx": step["step_idx"], "method": verifier,
                           "soft_label": None if ok is None else float(ok), "hard_label": ok, "status": status,
                           "first_error": first_error_of(local),
                           "labeler_version": LABELER_VERSION, "params_json": params,
                           "n_rollouts": 0, "n_correct": 0, "cost_rollouts": 0, "cost_tokens": 0})
    return FormalRun(verifications, labels, dict(counts))


@dataclass(frozen=True)
class FormalConfig:
    """Formal verifier settings."""

    timeout_s: float = FORMAL_TIMEOUT_S  # per step, in the verifier pool


class FormalLabeler:
    """One formal verifier (``name``: ``sympy`` or ``z3``) behind the one interface, derived variant: reads the
    partition's ``steps`` and ``problems`` and checks the steps of the tasks that verifier covers; its
    ``verifications`` rows are in ``extra["verifications"]``."""

    reads = ("steps", "problems")

    def __init__(self, config: FormalConfig | None = None, name: str = "sympy") -> None:
        if name not in _KIND:
            raise ValueError(f"formal verifier {name!r} is unknown; use one of {sorted(_KIND)}")
        self.config = config or FormalConfig()
        self.name = name

    def label(self, rows: PartitionRows) -> LabelRun:
        """:func:`verify_steps` over the steps whose task this verifier checks."""
        task_of = {p["problem_id"]: p["task"] for p in rows["problems"]}
        mine = [s for s in rows["steps"] if VERIFIER_OF_TASK.get(task_of.get(s["problem_id"], "")) == self.name]
        run = verify_steps(mine, task_of, self.config.timeout_s)
        return derived_run(self.name, [StepLabel(**row) for row in run.labels], verifications=run.verifications,
                           counts=run.counts)
