"""Progress labels at no extra cost: the step advantage MC(k) - MC(k-1) from rollouts already paid for.

"Rewarding Progress" (Setlur et al. 2024, PAV) scores a step by how much it changes the chance of reaching
the answer, not by the chance itself; GenPRM's relative progress is the same quantity. MC(k) is the ``mc``
labeler's estimate for the prefix ending at step k (its ``soft_label``); MC(-1), the question itself, is
the share of the problem's sampled solutions that are right (they are root rollouts, as in OmegaPRM).

Per step: ``soft_label = clip(0.5 + advantage / 2, 0, 1)`` (advantage in [-1, 1] mapped onto [0, 1]), and
the step is good (``hard_label``) when its prefix can still reach the answer (MC(k) > 0) and it did not
lower the estimate by more than ``tolerance``: with N = 8 rollouts one estimate has a standard error of up
to 0.18, so a tolerance of 0.25 keeps sampling noise from marking a neutral step bad.

Cost: no new rollouts, but a row rests on the base method's rollouts, so it carries its base row's
``cost_rollouts``/``cost_tokens`` (the rollouts it *used*, as :class:`prm.labeling.types.LabelRun` counts cost):
a solution's progress rows cost what its MC rows cost, and quality per rollout compares fairly.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from prm.datagen import is_synthetic
from prm.format import STATUS_LABELED, STATUS_UNVERIFIABLE, first_error_of
from prm.labeling.types import LabelRun, PartitionRows, StepLabel, derived_run, params_json
from warehouse.methods import method

PROGRESS_METHOD = method("progress").name


@dataclass(frozen=True)
class ProgressConfig:
    """Where MC comes from and how much of a drop makes a step bad.

    >>> ProgressConfig(tolerance=1.5)
    Traceback (most recent call last):
    ...
    ValueError: tolerance=1.5 must be in [0, 1]: a drop of the MC estimate larger than it makes a step bad
    """

    base_method: str = "mc"  # step_labels rows whose soft_label is MC(k)
    tolerance: float = 0.25  # largest drop of MC that still counts as a good step

    def __post_init__(self) -> None:
        if not 0.0 <= self.tolerance <= 1.0:
            raise ValueError(f"tolerance={self.tolerance} must be in [0, 1]: a drop of the MC estimate larger "
                             "than it makes a step bad")
        method(self.base_method)  # a clear error for a name outside the method table


def progress_labels(mc_rows: Sequence[Mapping[str, Any]], solutions: Sequence[Mapping[str, Any]],
                    config: ProgressConfig | None = None) -> list[StepLabel]:
    """``progress`` rows for every solution that has ``base_method`` rows; ``solutions`` gives MC(-1).

    >>> sols = [{"solution_id": "a", "problem_id": "p", "is_correct": True, "status": "ok"},
    ...         {"solution_id": "b", "problem_id": "p", "is_correct": False, "status": "ok"}]
    >>> mc = [{"solution_id": "b", "problem_id": "p", "step_idx": k, "method": "mc", "soft_label": v,
    ...        "n_rollouts": 8} for k, v in enumerate([0.75, 0.125, 0.0])]
    >>> [(round(lb.soft_label, 4), lb.hard_label) for lb in progress_labels(mc, sols)]
    [(0.625, True), (0.1875, False), (0.4375, False)]
    """
    config = config or ProgressConfig()
    root: dict[str, list[bool]] = defaultdict(list)
    for s in solutions:
        if s.get("status", "ok") == "ok":
            root[s["problem_id"]].append(s.get("is_correct") is True)
    by_solution: dict[str, dict[int, Mapping[str, Any]]] = defaultdict(dict)
    for r in mc_rows:
        if r["method"] == config.base_method:
            by_solution[r["solution_id"]][int(r["step_idx"])] = r
    params = params_json(PROGRESS_METHOD, config)
    labels: list[StepLabel] = []
    for sid, rows in by_solution.items():
        problem_id = next(iter(rows.values()))["problem_id"]
        outcomes = root.get(problem_id, [])
        previous: float | None = sum(outcomes) / len(outcomes) if outcomes else None
        steps = []
        for k in range(max(rows) + 1):
            mc = rows.get(k, {}).get("soft_label")
            if mc is None or previous is None:
                steps.append((k, None, None, rows.get(k, {})))
            else:
                advantage = mc - previous
                good = mc > 0 and advantage >= -config.tolerance
                steps.append((k, min(1.0, max(0.0, 0.5 + advantage / 2)), good, rows[k]))
            previous = mc
        first_error = first_error_of([good for _, _, good, _ in steps])
        labels += [StepLabel(solution_id=sid, problem_id=problem_id, step_idx=k, method=PROGRESS_METHOD,
                             soft_label=soft, hard_label=good,
                             status=STATUS_UNVERIFIABLE if good is None else STATUS_LABELED,
                             n_rollouts=int(row.get("n_rollouts") or 0), n_correct=int(row.get("n_correct") or 0),
                             first_error=first_error, params_json=params,
                             cost_rollouts=int(row.get("cost_rollouts") or 0),
                             cost_tokens=int(row.get("cost_tokens") or 0))
                   for k, soft, good, row in steps]
    return labels


class ProgressLabeler:
    """Progress labels behind the one interface, derived variant: reads the partition's ``step_labels`` (the
    ``config.base_method`` rows) and ``solutions`` (the policy's, for MC(-1))."""

    reads = ("step_labels", "solutions")

    def __init__(self, config: ProgressConfig | None = None, name: str = PROGRESS_METHOD) -> None:
        self.config = config or ProgressConfig()
        self.name = name

    def label(self, rows: PartitionRows) -> LabelRun:
        """:func:`progress_labels` of the partition; synthetic solutions do not count towards MC(-1)."""
        solutions = [s for s in rows["solutions"] if not is_synthetic(s["model"])]
        base = [r for r in rows["step_labels"] if r["method"] == self.config.base_method]
        return derived_run(self.name, progress_labels(base, solutions, self.config))
