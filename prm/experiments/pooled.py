"""The label-source comparison over several seeds: one row per (method, test set), each figure the mean over
seeds with a 95% interval over test problems that resamples every seed's verdicts on a problem together, and
each scorer's paired difference from the truth-trained PRM on the same problems (``*_vs_truth``)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from prm.best_of_n import (
    CONSTANT,
    LENGTH,
    ORACLE,
    bon_accuracies,
    constant_baseline,
    length_baseline,
    paired_bon_difference,
    pooled_bon,
)
from prm.evaluation import PerturbationRun, perturbation_columns, perturbation_report, split_test_sets
from prm.experiments.label_sources import PAIRED_METRICS, VERSUS_TRUTH, MethodResult, versus_key
from prm.first_error import ScoredSolution, as_solutions, has_step_truth, paired_f1_difference, pooled_f1
from prm.metrics import Siblings, paired_sensitivity_difference, pooled_sensitivity
from warehouse.methods import TRUTH

# test solutions, threshold, aggregation, siblings, and the off-policy perturbation pairs' scores (or None)
Run = tuple[list[ScoredSolution], float, str, Siblings | None, PerturbationRun | None]


def _detail(rows: Sequence[Mapping[str, Any]], model: str, test: str, metric: str) -> dict[str, Any]:
    row = next((r for r in rows if r["model"] == model and r["split"] == test and r["metric"] == metric), None)
    return json.loads(row["detail_json"] or "{}") if row else {}


def pooled_row(runs: Sequence[Run], bon_n: int) -> dict[str, Any]:
    """One scorer's figures over seeds, from (test solutions, threshold, best-of-N aggregation, sibling scores)
    per seed (threshold and aggregation chosen on validation by that seed's evaluation)."""
    f1, f1_ci = pooled_f1([(r[0], r[1]) for r in runs])
    bon = pooled_bon([(r[0], r[2]) for r in runs], bon_n)
    sens = pooled_sensitivity([r[3] for r in runs if r[3] is not None])
    perturbed = [r[4] for r in runs if r[4] is not None]
    oracle = bon_accuracies(runs[0][0], bon_n)[0][ORACLE] if runs else None
    return {"prm_f1": f1, "prm_f1_ci": f1_ci, "step_sensitivity": sens.value, "step_sensitivity_ci": sens.ci,
            **bon, "oracle_acc": oracle, "seeds": len(runs),
            "step_truth": any(has_step_truth(r[0]) for r in runs),  # False: step figures say "no step truth"
            **(perturbation_columns(perturbation_report(perturbed)) if perturbed else {})}


def versus_reference(runs: Sequence[Run], reference: Sequence[Run], bon_n: int, name: str = TRUTH
                     ) -> dict[str, Any]:
    """A scorer's paired differences from a reference scorer on the same test problems, each with its 95%
    interval: ``prm_f1_vs_<name>``, ``step_sensitivity_vs_<name>`` and ``bon_acc_vs_<name>`` (an interval
    that holds 0 means no difference)."""
    f1 = paired_f1_difference([(r[0], r[1]) for r in runs], [(r[0], r[1]) for r in reference])
    sens = paired_sensitivity_difference([r[3] for r in runs if r[3] is not None],
                                         [r[3] for r in reference if r[3] is not None])
    bon = paired_bon_difference([(r[0], r[2]) for r in runs], [(r[0], r[2]) for r in reference], bon_n)
    out = {}
    for metric, (value, ci) in zip(PAIRED_METRICS, (f1, sens, bon), strict=True):
        out[versus_key(metric, name)], out[versus_key(metric, name) + "_ci"] = value, ci
    return out


def pooled_comparison(seeds: Mapping[int, Sequence[MethodResult]], test_sets: Mapping[str, Sequence[dict]],
                      extra: Mapping[str, Mapping[str, list]] | None = None) -> list[dict[str, Any]]:
    """Rows over seeds for every trained method and, from the first seed, the constant and length baselines,
    each with its paired differences from the truth-trained PRM (:func:`versus_reference`) when truth trained.

    ``seeds`` maps a seed to its :func:`compare_label_sources` results; ``test_sets`` names the test solutions
    (:func:`prm.evaluation.heldout.split_test_sets`); ``extra`` adds scorers the comparison did not train
    (e.g. reading baselines): name -> test set -> the runs :func:`pooled_row` takes.
    """
    first = next(iter(seeds.values()))
    bon_n = next((r.summary["bon_n"] for r in first if "bon_n" in r.summary), 1)
    table = []
    for test, solutions in test_sets.items():
        ids = {s["solution_id"] for s in solutions}
        rows: list[tuple[dict[str, Any], list[Run]]] = []
        for method in [r.method for r in first]:
            runs, summary = _method_runs(seeds, method, test, ids, bon_n)
            if not runs:
                skipped = next(x for x in first if x.method == method).summary.get("skipped")
                table.append({"method": method, "test": test, "skipped": skipped, "seeds": 0})
                continue
            rows.append(({"method": method, "test": test, "label_f1": summary.get("label_f1"),
                          "rollouts_per_step": summary.get("rollouts_per_step")}, runs))
        rows += _position_baselines(first, test, ids, bon_n)
        rows += [({"method": name, "test": test, "label_f1": None, "rollouts_per_step": None}, per_test[test])
                 for name, per_test in (extra or {}).items() if per_test.get(test)]
        reference = next((runs for row, runs in rows if row["method"] == TRUTH), None)
        for row, runs in rows:
            paired = versus_reference(runs, reference, bon_n) if reference and row["method"] != TRUTH else {}
            table.append({**row, **pooled_row(runs, bon_n), **paired})
    return table


def with_truth_differences(table: Sequence[dict[str, Any]], results: Sequence[MethodResult],
                           train_max_steps: int | None) -> list[dict[str, Any]]:
    """One seed's :func:`comparison_table` rows with each scorer's paired differences from the truth-trained
    PRM (:func:`versus_reference`) added; unchanged when truth did not train."""
    scored = next((r.scored["test"] for r in results if r.model is not None), None)
    if scored is None:
        return list(table)
    pooled = pooled_comparison({0: results}, split_test_sets(scored, train_max_steps))
    paired = {(r["method"], r["test"]): {k: r[k] for key in VERSUS_TRUTH for k in (key, f"{key}_ci") if k in r}
              for r in pooled}
    return [{**row, **paired.get((row["method"], row.get("test")), {})} for row in table]


def _method_runs(seeds: Mapping[int, Sequence[MethodResult]], method: str, test: str, ids: set[str], bon_n: int
                 ) -> tuple[list[Run], dict[str, Any]]:
    """One trained method's runs on one test set, a run per seed (thresholds and aggregations chosen on
    validation by that seed's evaluation), and its last seed's summary."""
    runs, summary = [], {}
    for results in seeds.values():
        r = next(x for x in results if x.method == method)
        if r.model is None:
            continue
        summary = r.summary
        scored = as_solutions([s for s in r.scored["test"] if s["solution_id"] in ids])
        threshold = _detail(r.eval_rows, r.model, test, "processbench_f1")["threshold"]
        how = _detail(r.eval_rows, r.model, test, f"bon_acc@{bon_n}")["aggregation"]
        runs.append((scored, threshold, how, r.siblings.get(test), r.perturbations.get(test)))
    return runs, summary


def _position_baselines(results: Sequence[MethodResult], test: str, ids: set[str], bon_n: int
                        ) -> list[tuple[dict[str, Any], list[Run]]]:
    """The constant and length baselines (no seed changes them), evaluated beside the first trained method."""
    r = next((x for x in results if any(row["model"] == CONSTANT for row in x.eval_rows)), None)
    if r is None:
        return []
    solutions = as_solutions([s for s in r.scored["test"] if s["solution_id"] in ids])
    pairs = r.siblings.get(test, ((), (), ()))[0]
    perturbed = r.perturbations.get(test, ((), (), (), 0.0))[0]
    rows = []
    for name, baseline, step_score in ((CONSTANT, constant_baseline, lambda p: 1.0),
                                       (LENGTH, length_baseline, lambda p: 1.0 / (len(p.prefix) + 2))):
        same = [step_score(p) for p in pairs]  # both siblings sit at one position: a tie by construction
        threshold = _detail(r.eval_rows, name, test, "processbench_f1")["threshold"]
        level = [step_score(p) for p in perturbed]  # likewise a perturbed step and the right one it replaces
        run = (baseline(solutions), threshold, _detail(r.eval_rows, name, test, f"bon_acc@{bon_n}")["aggregation"],
               (pairs, same, same), (perturbed, level, level, threshold) if perturbed else None)
        rows.append(({"method": name, "test": test, "label_f1": None, "rollouts_per_step": None}, [run]))
    return rows
