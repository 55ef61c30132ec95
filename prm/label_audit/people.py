"""A label method against people's first-error labels (ProcessBench's metric), with intervals and cost.

Where solutions carry a human first error (imported with :mod:`prm.datagen.intake`), :func:`audit_against_people`
scores a method the way ProcessBench scores a critic: its predicted first error (the first step it labels wrong,
-1 when it labels every step right, a miss when an unlabeled step comes first; :func:`prm.label_audit.
predicted_first_errors`) against the label, by :func:`prm.metrics.processbench.official_score`. Besides:

* step precision and recall of "wrong", on the steps people's label decides (those up to the first error);
* cost per solution: rollouts and generated tokens the method used, and seconds when the caller timed it;
* quality per rollout: solutions whose first error matches people's per 1,000 rollouts (printed, not stored);
* a 95% interval of F1 that resamples problems (all solutions of a problem go together).

:func:`people_rows` writes it as ``prm_evaluations`` rows (``experiment`` = :data:`PEOPLE_EXPERIMENT`,
``model`` = the method, ``split`` = the source), so ``SELECT`` compares methods across splits.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from prm.format import markdown_table
from prm.label_audit.truth import per_1k_rollouts, predicted_first_errors
from prm.metrics import official_score, problem_bootstrap_ci, ratio

PEOPLE_EXPERIMENT = "label_audit_people"  # prm_evaluations.experiment of these rows
PEOPLE_METRICS = ("processbench_f1", "first_error_acc", "correct_acc", "step_precision", "step_recall",
                  "rollouts_per_solution", "tokens_per_solution", "seconds_per_solution")


@dataclass(frozen=True)
class PeopleAudit:
    """One method on one split against people's labels; fractions, None where undefined."""

    method: str
    split: str
    rows: int  # solutions with a human label
    error_acc: float | None
    correct_acc: float | None
    f1: float | None
    f1_ci: tuple[float, float] | None
    step_precision: float | None  # of the steps it labels wrong, the share people's label makes wrong
    step_recall: float | None  # of the steps people mark wrong, the share it labels wrong
    n_decided_steps: int  # steps people's label decides (up to and including the first error)
    rollouts_per_solution: float | None
    tokens_per_solution: float | None
    seconds_per_solution: float | None
    uses_reference: bool = False  # the method read a gold answer or reference solution
    agreed_per_1k_rollouts: float | None = None  # solutions whose first error matches people's, per 1,000 rollouts

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["f1_ci"] = list(self.f1_ci) if self.f1_ci else None
        return out


def audit_against_people(method: str, labels: Sequence[Mapping[str, Any]], steps: Sequence[Mapping[str, Any]],
                         solutions: Sequence[Mapping[str, Any]], *, split: str, cost_rollouts: int | None = None,
                         cost_tokens: int | None = None, seconds: float | None = None,
                         uses_reference: bool = False, seed: int = 0) -> PeopleAudit:
    """Audit ``labels`` (``step_labels`` rows of one method) against the ``first_error_truth`` of ``solutions``
    and the ``is_correct_truth`` of ``steps``; solutions without a human label are left out.

    >>> sols = [{"solution_id": "a", "problem_id": "p", "first_error_truth": 1},
    ...         {"solution_id": "b", "problem_id": "q", "first_error_truth": -1}]
    >>> steps = [{"solution_id": s, "step_idx": k, "is_correct_truth": ok}
    ...          for s, oks in (("a", (True, False)), ("b", (True, True))) for k, ok in enumerate(oks)]
    >>> labels = [{"solution_id": "a", "step_idx": 0, "hard_label": True}, {"solution_id": "a", "step_idx": 1,
    ...           "hard_label": False}, {"solution_id": "b", "step_idx": 0, "hard_label": False}]
    >>> r = audit_against_people("m", labels, steps, sols, split="toy")
    >>> r.error_acc, r.correct_acc, r.step_precision, r.step_recall
    (1.0, 0.0, 0.5, 1.0)
    """
    truth = {s["solution_id"]: int(s["first_error_truth"]) for s in solutions if s.get("first_error_truth") is not None}
    problem_of = {s["solution_id"]: s["problem_id"] for s in solutions if s["solution_id"] in truth}
    n_steps: dict[str, int] = defaultdict(int)
    decided: dict[tuple[str, int], bool] = {}
    for s in steps:
        if s["solution_id"] in truth:
            n_steps[s["solution_id"]] += 1
            if s.get("is_correct_truth") is not None:
                decided[(s["solution_id"], int(s["step_idx"]))] = bool(s["is_correct_truth"])
    mine = [r for r in labels if r["solution_id"] in truth]
    preds = predicted_first_errors(mine, {sid: n_steps[sid] for sid in truth})
    hard = {(r["solution_id"], int(r["step_idx"])): r.get("hard_label") for r in mine}
    flagged = [ok for key, ok in decided.items() if hard.get(key) is False]
    tp = sum(not ok for ok in flagged)
    ids = sorted(truth)
    score = official_score([truth[i] for i in ids], [preds.get(i) for i in ids])
    by_problem: dict[str, list[tuple[int, int | None]]] = defaultdict(list)
    for sid in ids:
        by_problem[problem_of[sid]].append((truth[sid], preds.get(sid)))

    def f1_of(sample: list[list[tuple[int, int | None]]]) -> float | None:
        pairs = [p for group in sample for p in group]
        return official_score([y for y, _ in pairs], [p for _, p in pairs]).f1

    rollouts = sum(int(r.get("cost_rollouts") or 0) for r in mine) if cost_rollouts is None else cost_rollouts
    tokens = sum(int(r.get("cost_tokens") or 0) for r in mine) if cost_tokens is None else cost_tokens
    return PeopleAudit(
        method=method, split=split, rows=len(ids), error_acc=score.error_acc, correct_acc=score.correct_acc,
        f1=score.f1, f1_ci=problem_bootstrap_ci(list(by_problem.values()), f1_of, seed=seed),
        step_precision=ratio(tp, len(flagged)), step_recall=ratio(tp, sum(not ok for ok in decided.values())),
        n_decided_steps=len(decided), rollouts_per_solution=ratio(rollouts, len(ids)),
        tokens_per_solution=ratio(tokens, len(ids)),
        seconds_per_solution=None if seconds is None else ratio(seconds, len(ids)), uses_reference=uses_reference,
        agreed_per_1k_rollouts=per_1k_rollouts(sum(preds.get(i) == truth[i] for i in ids), rollouts))


def people_rows(audit: PeopleAudit) -> list[dict[str, Any]]:
    """``prm_evaluations`` rows of ``audit`` (without provenance): one per metric of :data:`PEOPLE_METRICS`;
    the F1 row's detail holds its interval."""
    values = {"processbench_f1": audit.f1, "first_error_acc": audit.error_acc, "correct_acc": audit.correct_acc,
              "step_precision": audit.step_precision, "step_recall": audit.step_recall,
              "rollouts_per_solution": audit.rollouts_per_solution, "tokens_per_solution": audit.tokens_per_solution,
              "seconds_per_solution": audit.seconds_per_solution}
    rows = []
    for metric in PEOPLE_METRICS:
        detail: dict[str, Any] = {"truth": "people", "uses_reference": audit.uses_reference}
        if metric == "processbench_f1" and audit.f1_ci is not None:
            detail["ci"] = [round(v, 4) for v in audit.f1_ci]
        n = audit.n_decided_steps if metric.startswith("step_") else audit.rows
        rows.append({"experiment": PEOPLE_EXPERIMENT, "model": audit.method, "label_method": audit.method,
                     "split": audit.split, "metric": metric, "value": values[metric], "n": n,
                     "detail_json": json.dumps(detail, sort_keys=True)})
    return rows


_COLUMNS = ("method", "split", "rows", "error_acc", "correct_acc", "f1", "f1 95% CI", "step_precision", "step_recall",
            "rollouts_per_solution", "agreed_per_1k_rollouts", "tokens_per_solution", "uses_reference")


def people_markdown(audits: Sequence[PeopleAudit]) -> str:
    """The audits as a markdown table, numbers to 3 decimals (``-`` = undefined).

    >>> a = PeopleAudit("sympy", "pb", 2, 0.5, 1.0, 0.667, (0.4, 0.9), 1.0, 0.25, 4, 0.0, 0.0, None)
    >>> print(people_markdown([a]).splitlines()[2])
    | sympy | pb | 2 | 0.500 | 1.000 | 0.667 | [0.400, 0.900] | 1.000 | 0.250 | 0.000 | - | 0.000 | False |
    """
    def ci(a: PeopleAudit) -> str:
        return f"[{a.f1_ci[0]:.3f}, {a.f1_ci[1]:.3f}]" if a.f1_ci else "-"

    rows = [{**{c: getattr(a, c, None) for c in _COLUMNS}, "f1 95% CI": ci(a)} for a in audits]
    return markdown_table(rows, _COLUMNS)
