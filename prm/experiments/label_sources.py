"""Which label source gives the best PRM per rollout paid: one PRM per method, same problems, same test set.

For every method: the training set from the warehouse (same split seed, so the same problems in every
split), a PRM trained on it, its scores on the held-out validation and test solutions (every gradable
solution with exact truth, whatever the method labeled), and :func:`prm.evaluation.evaluation_table`
(threshold and best-of-N aggregation chosen on validation). The headline row per method: its label
quality against truth (ProcessBench F1 of the labels on the train split), rollouts paid per labeled step,
and per test set (``in_distribution``, and ``easy_to_hard`` with ``train_max_steps``) the PRM's ProcessBench
F1, step sensitivity, best-of-N accuracy and its gain over majority vote, each with a 95% interval over test
problems. :mod:`prm.experiments.pooled` pools several seeds' comparisons into one row per method and test set.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prm.best_of_n import DEFAULT_BON_N, MAJORITY, ORACLE, BestOfN, bon_curve
from prm.evaluation import IN_DISTRIBUTION, columns_from_rows, heldout_solutions, split_test_sets
from prm.evaluation.folder import evaluate_folder
from prm.first_error import MISSING_KEY, NO_STEP_TRUTH, as_solutions
from prm.format import markdown_table
from prm.label_audit import audit_labels
from prm.training import PRMTrainConfig, TrainingSetConfig, build_training_set, stratified_splits, train_prm
from warehouse import connect
from warehouse.methods import COMPARED_METHODS, TRUTH


@dataclass(frozen=True)
class ComparisonConfig:
    """What to compare and how each PRM is trained (all methods share everything but the labels)."""

    methods: tuple[str, ...] = COMPARED_METHODS
    data: TrainingSetConfig = field(default_factory=lambda: TrainingSetConfig(method=TRUTH))
    train: PRMTrainConfig = field(default_factory=PRMTrainConfig)
    bon_n: int = DEFAULT_BON_N  # best-of-N on test problems with at least N solutions


@dataclass(frozen=True)
class MethodResult:
    """One method's PRM: where it is, its headline numbers, and every evaluation row."""

    method: str
    model_dir: Path | None
    model: str | None  # model_version of the PRM folder
    summary: dict[str, Any]  # method, label_f1, rollouts_per_step, prm_f1, bon_acc (+ counts, skipped reason)
    eval_rows: list[dict[str, Any]]
    scores: list[dict[str, Any]]  # step_scores rows on the held-out solutions
    # Per test set (in_distribution, easy_to_hard): the summary's headline figures on that set; the summary
    # itself holds the first set's.
    by_test: dict[str, dict[str, Any]] = field(default_factory=dict)
    scored: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # val/test solutions with ``scores``
    siblings: dict[str, Any] = field(default_factory=dict)  # per test set: (sibling pairs, right, wrong scores)
    perturbations: dict[str, Any] = field(default_factory=dict)  # per test set: off-policy pairs and their scores


def _label_quality(con: Any, method: str, train_ids: set[str]) -> tuple[float | None, float | None]:
    """(ProcessBench F1 of the method's labels vs truth, rollouts paid per labeled step) on train solutions."""
    if method == TRUTH:
        return 1.0, 0.0

    def rows(sql: str, params: list) -> list[dict]:
        cur = con.execute(sql, params)
        names = [d[0] for d in cur.description]
        return [r for r in (dict(zip(names, v, strict=True)) for v in cur.fetchall()) if r["solution_id"] in train_ids]

    labels = rows("SELECT * FROM step_labels WHERE method = ?", [method])
    steps = rows("SELECT solution_id, step_idx, is_correct_truth FROM steps", [])
    sols = rows("SELECT solution_id, first_error_truth FROM solutions WHERE first_error_truth IS NOT NULL", [])
    labeled = {r["solution_id"] for r in labels}
    audit = audit_labels(method, labels, [s for s in steps if s["solution_id"] in labeled],
                         [s for s in sols if s["solution_id"] in labeled])
    return audit.processbench_f1, audit.rollouts_per_step


def compare_label_sources(root: str | Path, out_root: str | Path, config: ComparisonConfig | None = None,
                          progress: Callable[[str], None] = print) -> list[MethodResult]:
    """Train and evaluate one PRM per ``config.methods``; a method without usable labels gets a row that says
    why (never a silently missing row)."""
    config = config or ComparisonConfig()
    con = connect(root)
    heldout = heldout_solutions(con, stratified_splits(con, config.data), source=config.data.source)
    sets = split_test_sets(heldout["test"], config.data.train_max_steps)
    if not heldout["test"]:
        raise ValueError(f"the held-out splits hold {len(heldout['val'])} validation and 0 test solutions; sample "
                         "solutions for more problems (or raise test_share) so every PRM has a test set")
    results: list[MethodResult] = []
    for i, method in enumerate(config.methods):
        progress(f"[{i + 1}/{len(config.methods)}] {method}: building the training set")
        data = dataclasses.replace(config.data, method=method)
        try:
            ts = build_training_set(con, data)
        except ValueError as exc:  # no labels, one class only...: reported in the table
            results.append(MethodResult(method, None, None, {"method": method, "skipped": str(exc)}, [], []))
            continue
        train_ids = {r["solution_id"] for r in ts.split("train")}
        label_f1, rollouts_per_step = _label_quality(con, method, train_ids)
        progress(f"[{i + 1}/{len(config.methods)}] {method}: training on {len(train_ids)} solutions")
        folder = train_prm(ts, Path(out_root) / method, config.train)
        first = not any(r.eval_rows for r in results)  # the baselines once, beside the first PRM
        ev = evaluate_folder(folder, heldout, method, config.bon_n, baselines=first,
                             experiment="label_source_comparison", test_sets=sets)
        by_test = {name: headline(ev.rows, ev.model, ev.bon_n, name) for name in sets}
        results.append(MethodResult(method, folder, ev.model, {
            "method": method, "label_f1": label_f1, "rollouts_per_step": rollouts_per_step,
            **next(iter(by_test.values())), "bon_n": ev.bon_n, "train_solutions": len(train_ids),
        }, ev.rows, ev.scores, by_test, ev.scored, ev.siblings, ev.perturbations))
    return results


def headline(rows: Sequence[dict[str, Any]], model: str, bon_n: int, test: str) -> dict[str, Any]:
    """A scorer's headline figures on one test set from its evaluation rows, each with its 95% interval over
    test problems: ``prm_f1``, ``step_auc``, ``step_sensitivity``, ``bon_acc`` and ``bon_gain`` (over majority
    vote, paired), plus ``majority_acc`` and ``oracle_acc`` on the same problems."""
    rows = [r for r in rows if r["split"] == test]
    own = {r["metric"]: r for r in rows if r["model"] == model}
    refs = {r["model"]: r["value"] for r in rows if r["metric"] == f"bon_acc@{bon_n}"}

    def value(metric: str) -> float | None:
        return own[metric]["value"] if metric in own else None

    def ci(metric: str) -> list[float] | None:
        detail = json.loads(own[metric]["detail_json"] or "{}") if metric in own else {}
        return list(detail["ci"]) if detail.get("ci") is not None else None

    gap = json.loads(own[f"bon_gap_closed@{bon_n}"]["detail_json"]) if f"bon_gap_closed@{bon_n}" in own else {}
    f1_detail = json.loads(own["processbench_f1"]["detail_json"] or "{}") if "processbench_f1" in own else {}
    return {"test": test, "prm_f1": value("processbench_f1"), "prm_f1_ci": ci("processbench_f1"),
            "step_auc": value("step_auc"),
            "step_sensitivity": value("step_sensitivity"), "step_sensitivity_ci": ci("step_sensitivity"),
            "bon_acc": value(f"bon_acc@{bon_n}"), "bon_acc_ci": ci(f"bon_acc@{bon_n}"),
            "bon_gain": value(f"bon_gain@{bon_n}"), "bon_gain_ci": ci(f"bon_gain@{bon_n}"),
            "vote_acc": value(f"vote_acc@{bon_n}"), "vote_acc_ci": ci(f"vote_acc@{bon_n}"),
            "majority_acc": refs.get(MAJORITY, gap.get("majority")), "oracle_acc": refs.get(ORACLE, gap.get("oracle")),
            "step_truth": f1_detail.get(MISSING_KEY) != NO_STEP_TRUTH, **columns_from_rows(rows, model, test)}


def comparison_table(results: Sequence[MethodResult]) -> list[dict[str, Any]]:
    """The headline table: per test set, one row per method, then the baselines and best-of-N references on
    the same test set.

    Keys: ``method``, ``label_f1``, ``rollouts_per_step`` and :func:`headline`'s (with ``test``), plus
    ``skipped`` where a method could not be trained.
    """
    bon_n = next((r.summary["bon_n"] for r in results if "bon_n" in r.summary), DEFAULT_BON_N)
    rows = [row for r in results for row in r.eval_rows]
    tests = list(dict.fromkeys(t for r in results for t in r.by_test))
    table = [dict(r.summary) for r in results if not r.by_test]  # skipped methods
    for test in tests:
        table += [{**r.summary, **r.by_test[test]} for r in results if test in r.by_test]
        for name in sorted({row["model"] for row in rows if row["split"] == test} - {r.model for r in results}):
            table.append({"method": name, "label_f1": None, "rollouts_per_step": None,
                          **headline(rows, name, bon_n, test)})
    return table


def bon_curves(results: Sequence[MethodResult], train_max_steps: int | None, test: str = IN_DISTRIBUTION
               ) -> dict[str, list[BestOfN]]:
    """Best-of-N at N = 1, 2, 4, ... (up to the comparison's N) for every trained method on one test set, the
    aggregation chosen on validation at each N: the input of :func:`prm.reports.plots.plot_best_of_n_by_scorer`.
    ``train_max_steps`` is the comparison's data config's (it names the test sets)."""
    curves = {}
    for r in results:
        if r.model is None:
            continue
        rows = split_test_sets(r.scored["test"], train_max_steps).get(test)
        if rows:
            ns = [2**k for k in range(8) if 2**k <= r.summary["bon_n"]]
            curves[r.method] = bon_curve(as_solutions(r.scored["val"]), as_solutions(rows), ns)
    return curves


def comparison_markdown(table: Sequence[dict[str, Any]]) -> str:
    """The headline table as markdown (``-`` = not applicable), the paired differences from the truth-trained
    PRM where the table has them, and each scorer's least-detected off-policy perturbation kind last."""
    cols = ("test", "method", "label_f1", "rollouts_per_step", "prm_f1", "step_sensitivity", "bon_acc", "bon_gain")
    cols += ("vote_acc",) if any(row.get("vote_acc") is not None for row in table) else ()
    cols += tuple(k for k in VERSUS_TRUTH if any(k in row for row in table))
    cols += ("worst_detection",) if any(row.get("worst_detection") for row in table) else ()
    return markdown_table([f"| - | {row['method']} | skipped: {row['skipped'][:80]} |" + " |" * (len(cols) - 3)
                           if row.get("skipped") else _with_intervals(row) for row in table], cols)


PAIRED_METRICS = ("prm_f1", "step_sensitivity", "bon_acc")  # compared with a reference scorer, problem by problem
# Figures that need exact step truth (of the test set, or of the train split for label_f1).
STEP_FIGURES = ("label_f1", "prm_f1", "step_auc", "step_sensitivity", "prm_f1_vs_truth", "step_sensitivity_vs_truth")


def versus_key(metric: str, reference: str = TRUTH) -> str:
    """The table key of a paired difference from ``reference``: ``prm_f1_vs_truth`` (its interval: ``..._ci``)."""
    return f"{metric}_vs_{reference}"


VERSUS_TRUTH = tuple(versus_key(m) for m in PAIRED_METRICS)


def _with_intervals(row: dict[str, Any]) -> dict[str, Any]:
    """``0.812 [0.75, 0.86]`` for each figure that has an interval (a difference with its sign); ``no step truth``
    for a step figure of a test set without step truth."""
    out = dict(row)
    if isinstance(row.get("worst_detection"), dict):  # the off-policy kind this scorer detects least often
        out["worst_detection"] = f"{row['worst_detection']['detection']:.3f} ({row['worst_detection']['kind']})"
    if row.get("step_truth") is False:
        out |= {key: NO_STEP_TRUTH for key in STEP_FIGURES if row.get(key) is None}
    for key in ("prm_f1", "step_sensitivity", "bon_acc", "bon_gain", "vote_acc", *VERSUS_TRUTH):
        if row.get(key) is not None and row.get(f"{key}_ci"):
            low, high = row[f"{key}_ci"]
            sign = "+" if key in VERSUS_TRUTH or key == "bon_gain" else ""
            out[key] = f"{row[key]:{sign}.3f} [{low:.2f}, {high:.2f}]"
    return out
