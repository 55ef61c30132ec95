"""The ``prm_evaluations`` table: a scorer's ProcessBench, step-AUC and best-of-N rows on test (thresholds and
aggregations chosen on validation), with 95% intervals over test problems, beside the baselines and references."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from prm.best_of_n import (
    AGGREGATIONS,
    CONSTANT,
    DEFAULT_BON_N,
    LENGTH,
    MAJORITY,
    ORACLE,
    RANDOM,
    REFERENCES,
    accuracy,
    bon_intervals,
    choose_vote,
    constant_baseline,
    evaluate_best_of_n,
    length_baseline,
)
from prm.first_error import (
    MISSING_KEY,
    NEVER_FLAG,
    ScoredSolution,
    as_solutions,
    evaluate_processbench,
    f1_ci,
    step_auc,
    step_truth_note,
)
from prm.format import markdown_table
from prm.metrics import Sensitivity


def evaluation_table(model: str, label_method: str | None,
                     val: Iterable[ScoredSolution | Mapping[str, Any]],
                     test: Iterable[ScoredSolution | Mapping[str, Any]], *, split: str = "test",
                     bon_n: int = DEFAULT_BON_N, grid: Sequence[float] | None = None,
                     baselines: bool = True, experiment: str = "prm_evaluation") -> list[dict[str, Any]]:
    """``prm_evaluations`` rows (without provenance) for ``model`` and, with ``baselines``, the constant and
    length-only predictors plus majority vote, random pick and oracle, all on the same ``test`` solutions.

    Per scorer: ``processbench_f1``, ``first_error_acc``, ``correct_acc`` (detail: the threshold and its
    validation F1), ``step_auc`` (to the first error), ``step_auc_all``, ``bon_acc@N`` (the aggregation
    chosen on validation), ``bon_acc@N:<aggregation>``, ``bon_gap_closed@N``, and ``vote_acc@N`` / ``vote_gain@N``
    (the PRM-weighted vote chosen on validation, and its gain over majority vote). References: ``bon_acc@N``. Every
    accuracy and gain carries its 95% interval over test problems; step metrics of a test set without step truth
    are None with ``missing: no step truth`` (:mod:`prm.first_error.truth`). ``val`` and ``test`` must not share a
    problem.

    >>> sols = [{"solution_id": f"{p}{i}", "problem_id": p, "scores": [0.9, 0.2 if i else 0.8],
    ...          "first_error": 1 if i else -1, "final_answer": str(i), "is_correct": not i}
    ...         for p in "ab" for i in range(2)]
    >>> rows = evaluation_table("prm", "omegaprm", sols[:2], sols[2:], bon_n=2)
    >>> [(r["model"], r["value"]) for r in rows if r["metric"] == "processbench_f1"]
    [('prm', 1.0), ('baseline:constant', 0.0), ('baseline:length', 0.0)]
    """
    val, test = as_solutions(val), as_solutions(test)
    shared = {s.problem_id for s in val} & {s.problem_id for s in test}
    if shared:
        raise ValueError(f"validation and {split} share {len(shared)} problems (e.g. {sorted(shared)[:3]}); "
                         "split by problem so the threshold and aggregation are not chosen on test")
    rows = _scorer_rows(model, label_method, split, val, test, bon_n, grid, None)
    if baselines:
        rows += _scorer_rows(CONSTANT, None, split, constant_baseline(val), constant_baseline(test), bon_n, grid,
                             NEVER_FLAG)
        rows += _scorer_rows(LENGTH, None, split, length_baseline(val), length_baseline(test), bon_n, grid, None)
        refs = {ref: accuracy(test, bon_n, ref) for ref in REFERENCES}  # outcome-level: gold answers suffice
        rows += [_row(ref, None, split, f"bon_acc@{bon_n}", a.value, a.n_problems, ci=a.ci) for ref, a in refs.items()]
    return [{"experiment": experiment, **row} for row in rows]  # what produced them: part of the table's key


def _scorer_rows(model: str, label_method: str | None, split: str, val: list[ScoredSolution],
                 test: list[ScoredSolution], bon_n: int, grid: Sequence[float] | None,
                 threshold: float | None) -> list[dict[str, Any]]:
    pb = evaluate_processbench(val, test, grid=grid, threshold=threshold)
    how = {"threshold": pb.threshold, "chosen_on": pb.chosen_on, "val_f1": pb.val_f1}
    f1_interval = f1_ci(test, pb.threshold)
    auc, n_auc = step_auc(test)
    auc_all, n_all = step_auc(test, all_steps=True)
    bon = evaluate_best_of_n(val, test, bon_n)
    picked = {"aggregation": bon.chosen, "val_accuracy": bon.val_accuracy}
    bon_ci = bon_intervals(test, bon_n, bon.chosen)
    vote, vote_on = choose_vote(val, bon_n)  # the PRM-weighted vote, beside the best aggregation of any kind
    voted = accuracy(test, bon_n, vote)
    note = step_truth_note(test)  # step metrics without step truth say so instead of a number
    return [
        _row(model, label_method, split, "processbench_f1", pb.f1, pb.n_wrong + pb.n_correct, **how,
             ci=f1_interval, **note),
        _row(model, label_method, split, "first_error_acc", pb.first_error_acc, pb.n_wrong, **how, **note),
        _row(model, label_method, split, "correct_acc", pb.correct_acc, pb.n_correct, **how, **note),
        _row(model, label_method, split, "step_auc", auc, n_auc, steps="up to the first error", **note),
        _row(model, label_method, split, "step_auc_all", auc_all, n_all, steps="all", **note),
        _row(model, label_method, split, f"vote_acc@{bon_n}", voted.value, voted.n_problems, aggregation=vote,
             chosen_on=vote_on, ci=voted.ci),
        _row(model, label_method, split, f"vote_gain@{bon_n}", voted.gain, voted.n_problems, aggregation=vote,
             ci=voted.gain_ci, over=MAJORITY),
        _row(model, label_method, split, f"bon_acc@{bon_n}", bon.prm, bon.n_problems, **picked, ci=bon_ci["ci"]),
        _row(model, label_method, split, f"bon_gain@{bon_n}", bon_ci["gain"], bon.n_problems, **picked,
             ci=bon_ci["gain_ci"], over=MAJORITY),
        *(_row(model, label_method, split, f"bon_acc@{bon_n}:{h}", bon.accuracy[h], bon.n_problems)
          for h in AGGREGATIONS),
        _row(model, label_method, split, f"bon_gap_closed@{bon_n}", bon.gap_closed, bon.n_problems,
             majority=bon.accuracy[MAJORITY], oracle=bon.accuracy[ORACLE], **picked),
    ]


def sensitivity_row(model: str, label_method: str | None, sens: Sensitivity, *, split: str = "test",
                    experiment: str = "prm_evaluation", **note: str) -> dict[str, Any]:
    """The ``step_sensitivity`` row of a scorer (:mod:`prm.metrics.sensitivity`), its interval in the detail;
    ``note``: :func:`prm.first_error.step_truth_note` of the test solutions."""
    return {"experiment": experiment, **_row(model, label_method, split, "step_sensitivity", sens.value, sens.n_pairs,
                                             ci=sens.ci, problems=sens.n_problems, **note)}


MIN_SIBLING_PAIRS = 10  # fewer pairs measure nothing: the text says so instead of printing the value


def sensitivity_text(row: Mapping[str, Any]) -> str:
    """``0.812 [0.74, 0.88] on 245 sibling pairs``, or why there is no value worth reading.

    >>> sensitivity_text({"value": 1.0, "n": 2, "detail_json": None})
    'only 2 sibling pairs in the test split: too few to measure step sensitivity (it needs 10 or more)'
    """
    detail = json.loads(row["detail_json"] or "{}")
    if row["value"] is None and detail.get(MISSING_KEY):
        return f"{detail[MISSING_KEY]}: sibling steps need exact step truth"
    if row["value"] is None:
        return "no sibling pairs in the test split (two samples of one prefix, one right and one wrong)"
    if row["n"] < MIN_SIBLING_PAIRS:
        return (f"only {row['n']} sibling pairs in the test split: too few to measure step sensitivity (it needs "
                f"{MIN_SIBLING_PAIRS} or more)")
    interval = f" [{detail['ci'][0]:.2f}, {detail['ci'][1]:.2f}]" if detail.get("ci") else ""
    return f"{row['value']:.3f}{interval} on {row['n']} sibling pairs"


def metric_row(model: str, label_method: str | None, split: str, metric: str, value: float | None, n: int,
               **detail: Any) -> dict[str, Any]:
    """One ``prm_evaluations`` row without ``experiment`` and provenance (other evaluations, e.g.
    :mod:`prm.evaluation.external`, write the same rows)."""
    return _row(model, label_method, split, metric, value, n, **detail)


def _row(model: str, label_method: str | None, split: str, metric: str, value: float | None, n: int,
         **detail: Any) -> dict[str, Any]:
    return {"model": model, "label_method": label_method, "split": split, "metric": metric,
            "value": None if value is None else float(value), "n": int(n),
            "detail_json": json.dumps(detail, sort_keys=True) if detail else None}


def evaluation_markdown(rows: Sequence[Mapping[str, Any]],
                        metrics: Sequence[str] | None = None) -> str:
    """``prm_evaluations`` rows as a markdown table: one line per (model, label method, split), one column per
    metric (default: all, in order of first appearance), values to 3 decimals (``-`` = undefined or absent;
    a row's stated reason, e.g. ``no step truth``, where it has one).

    >>> print(evaluation_markdown([{"model": "prm", "label_method": "mc", "split": "test", "metric": "step_auc",
    ...                             "value": 0.75, "n": 4, "detail_json": None}]))
    | model | label_method | split | step_auc |
    |---|---|---|---|
    | prm | mc | test | 0.750 |
    """
    metrics = list(metrics) if metrics is not None else list(dict.fromkeys(r["metric"] for r in rows))
    table: dict[tuple[str, str, str], dict[str, float | str | None]] = defaultdict(dict)
    for r in rows:
        value = None if r["value"] is None else float(r["value"])
        if value is None and r.get("detail_json"):
            value = json.loads(r["detail_json"]).get(MISSING_KEY)
        table[(r["model"], r.get("label_method") or "-", r["split"])][r["metric"]] = value
    keys = ("model", "label_method", "split")
    return markdown_table([{**dict(zip(keys, key, strict=True)), **values} for key, values in table.items()],
                          [*keys, *metrics])


def unmeasurable_note(rows: Sequence[Mapping[str, Any]]) -> str:
    """A line above the table when best-of-N cannot tell scorers apart: no test problem has a correct solution
    (the oracle picks nothing right), or every one has only correct ones (nothing to pick against)."""
    oracle = [r["value"] for r in rows if r["model"] == ORACLE and r["metric"].startswith("bon_acc@")]
    uniform = [r["value"] for r in rows if r["model"] == RANDOM and r["metric"].startswith("bon_acc@")]
    if oracle and all(v == 0 for v in oracle):
        return ("**No test problem has a correct solution** (oracle 0): best-of-N and the votes measure nothing "
                "here; sample more solutions, easier problems or a stronger policy.\n\n")
    if uniform and all(v == 1 for v in uniform):
        return "**Every test solution is correct**: best-of-N has nothing to pick against.\n\n"
    return ""
