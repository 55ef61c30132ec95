"""Label quality against exact truth: step accuracy/F1, first-error accuracy, ProcessBench F1, cost.

The metrics live in :mod:`prm.metrics.stats` (shared with PRM evaluation). Conventions here:

* A step without a hard label (no row, or unverifiable) counts as a miss: wrong for accuracy, a false
  negative when the step is wrong.
* A solution's predicted first error is the ``first_error`` its rows carry; methods that set none
  get it from hard labels: the first step labeled False, -1 when every step is labeled True, none when
  an unlabeled step comes first. No prediction is a miss.
* Cost per step = the run's total rollouts (tokens) / steps in the audited solutions, labeled or not.
* Quality per rollout = steps whose hard label agrees with truth per 1,000 rollouts (``agreed_per_1k_rollouts``);
  undefined for a method that used no rollouts. It is printed beside rollouts per step, not stored (``label_audit``
  keeps its columns; it follows from ``step_accuracy`` and ``rollouts_per_step``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Protocol

from prm.format import first_error_of, markdown_table
from prm.metrics import first_error_accuracies, harmonic_mean, ratio, step_f1


class LabelRecord(Protocol):
    """A step label that writes itself as a ``step_labels`` row (``prm.labeling``'s ``StepLabel``)."""

    def to_row(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class AuditRow:
    """One ``label_audit`` row (without provenance), plus label coverage for the printed table."""

    method: str
    n_solutions: int
    n_steps: int
    step_accuracy: float | None
    step_f1: float | None  # positive class = wrong step
    first_error_acc: float | None  # exact match on wrong solutions
    correct_acc: float | None  # correct solutions accepted (predicted first error -1)
    processbench_f1: float | None
    rollouts_per_step: float | None
    tokens_per_step: float | None
    coverage: float | None = None  # share of audited steps with a hard label; not a label_audit column
    agreed_per_1k_rollouts: float | None = None  # steps labeled as truth has them per 1,000 rollouts; not a column

    def to_row(self) -> dict[str, Any]:
        """The ``label_audit`` row."""
        row = asdict(self)
        row.pop("coverage")
        row.pop("agreed_per_1k_rollouts")
        return row


def _as_row(label: LabelRecord | Mapping[str, Any]) -> Mapping[str, Any]:
    return label if isinstance(label, Mapping) else label.to_row()


def audit_labels(method: str, labels: Sequence[LabelRecord | Mapping[str, Any]],
                 steps: Sequence[Mapping[str, Any]], solutions: Sequence[Mapping[str, Any]], *,
                 cost_rollouts: int | None = None, cost_tokens: int | None = None) -> AuditRow:
    """Audit ``labels`` (StepLabels or ``step_labels`` rows of one method) against ``steps`` rows
    (``is_correct_truth``) and ``solutions`` rows (``first_error_truth``).

    Solutions without exact truth are left out. Costs default to the sum of the rows' cost columns.

    >>> truth_steps = [{"solution_id": "a", "step_idx": i, "is_correct_truth": ok} for i, ok in enumerate([1, 0])]
    >>> truth_sols = [{"solution_id": "a", "first_error_truth": 1}]
    >>> rows = [{"solution_id": "a", "step_idx": 0, "hard_label": True, "first_error": None, "cost_rollouts": 8},
    ...         {"solution_id": "a", "step_idx": 1, "hard_label": False, "first_error": None, "cost_rollouts": 8}]
    >>> r = audit_labels("mc", rows, truth_steps, truth_sols)
    >>> r.step_accuracy, r.first_error_acc, r.correct_acc, r.rollouts_per_step, r.agreed_per_1k_rollouts
    (1.0, 1.0, None, 8.0, 125.0)
    """
    truth_fe = {s["solution_id"]: s["first_error_truth"] for s in solutions if s.get("first_error_truth") is not None}
    truth_steps: dict[str, dict[int, bool | None]] = defaultdict(dict)
    for s in steps:
        if s["solution_id"] in truth_fe:
            truth_steps[s["solution_id"]][int(s["step_idx"])] = s.get("is_correct_truth")
    rows = [_as_row(lb) for lb in labels]
    hard: dict[str, dict[int, bool | None]] = defaultdict(dict)
    for r in rows:
        hard[r["solution_id"]][int(r["step_idx"])] = r.get("hard_label")
    tp = fp = fn = right = judged = labeled = 0
    for sid, truth in truth_steps.items():
        for k, ok in truth.items():
            if ok is None:
                continue
            judged += 1
            pred = hard[sid].get(k)
            labeled += pred is not None
            right += pred is not None and pred == bool(ok)
            tp += pred is False and not ok
            fp += pred is False and bool(ok)
            fn += pred is not False and not ok
    preds = predicted_first_errors(rows, {sid: len(truth_steps.get(sid, {})) for sid in truth_fe})
    fe_acc, ok_acc = first_error_accuracies(preds, truth_fe)
    n_steps = sum(len(t) for t in truth_steps.values())
    rollouts = sum(int(r.get("cost_rollouts") or 0) for r in rows) if cost_rollouts is None else cost_rollouts
    tokens = sum(int(r.get("cost_tokens") or 0) for r in rows) if cost_tokens is None else cost_tokens
    return AuditRow(method=method, n_solutions=len(truth_fe), n_steps=n_steps, step_accuracy=ratio(right, judged),
                    step_f1=step_f1(tp, fp, fn),
                    first_error_acc=fe_acc, correct_acc=ok_acc, processbench_f1=harmonic_mean(fe_acc, ok_acc),
                    rollouts_per_step=ratio(rollouts, n_steps), tokens_per_step=ratio(tokens, n_steps),
                    coverage=ratio(labeled, judged), agreed_per_1k_rollouts=per_1k_rollouts(right, rollouts))


def per_1k_rollouts(count: int, rollouts: int) -> float | None:
    """``count`` per 1,000 rollouts; None when no rollout was used (a free method has no quality per rollout).

    >>> per_1k_rollouts(30, 240), per_1k_rollouts(3, 0)
    (125.0, None)
    """
    return 1000.0 * count / rollouts if rollouts > 0 else None


def predicted_first_errors(rows: Sequence[Mapping[str, Any]], n_steps: Mapping[str, int]) -> dict[str, int | None]:
    """Each solution's predicted first error (see the module conventions); ``n_steps`` = steps per solution.

    >>> predicted_first_errors([{"solution_id": "a", "step_idx": 0, "hard_label": False}], {"a": 2, "b": 1})
    {'a': 0, 'b': None}
    """
    hard: dict[str, dict[int, bool | None]] = defaultdict(dict)
    stated: dict[str, int] = {}
    for r in rows:
        hard[r["solution_id"]][int(r["step_idx"])] = r.get("hard_label")
        if r.get("first_error") is not None:
            stated[r["solution_id"]] = int(r["first_error"])
    return {sid: stated.get(sid, first_error_of([hard[sid].get(k) for k in range(n)])) for sid, n in n_steps.items()}


_COLUMNS = ("method", "n_solutions", "n_steps", "step_accuracy", "step_f1", "first_error_acc", "correct_acc",
            "processbench_f1", "rollouts_per_step", "agreed_per_1k_rollouts", "tokens_per_step", "coverage")


def audit_markdown(rows: Sequence[AuditRow]) -> str:
    """The audit rows as a markdown table, numbers to 3 decimals (``-`` = undefined).

    >>> print(audit_markdown([AuditRow("mc", 1, 2, 1.0, None, 1.0, None, None, 8.0, 96.5)]).splitlines()[2])
    | mc | 1 | 2 | 1.000 | - | 1.000 | - | - | 8.000 | - | 96.500 | - |
    """
    return markdown_table([{c: getattr(r, c) for c in _COLUMNS} for r in rows], _COLUMNS)
