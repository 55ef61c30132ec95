"""Which label source gives the best PRM per rollout paid: one PRM per method, same problems, same test set.

For every method: the training set from the warehouse (same split seed, so the same problems in every
split), a PRM trained on it, its scores on the held-out validation and test solutions (every gradable
solution with exact truth, whatever the method labeled), and :func:`prm.evaluation.evaluation_table`
(threshold and best-of-N aggregation chosen on validation). The headline row per method: its label
quality against truth (ProcessBench F1 of the labels on the train split), rollouts paid per labeled step,
the PRM's ProcessBench F1 and best-of-N accuracy on test.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prm.evaluation import evaluation_table
from prm.evaluation.heldout import heldout_solutions
from prm.evaluation.prm_eval import DEFAULT_BON_N
from prm.labeling.audit import audit_labels
from prm.models import model_version
from prm.scoring import load_prm
from prm.training.config import PRMTrainConfig
from prm.training.data import TrainingSetConfig, build_training_set
from prm.training.splits import stratified_splits
from prm.training.trainer import train_prm
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


def _score(scorer: Any, solutions: Sequence[dict], model: str) -> tuple[list[dict], list[dict]]:
    scored = scorer.score_batch([(s["question"], s["steps"]) for s in solutions])
    evald = [{**s, "scores": sc} for s, sc in zip(solutions, scored, strict=True)]
    rows = [{"model": model, "solution_id": s["solution_id"], "problem_id": s["problem_id"], "step_idx": k,
             "score": float(v)} for s, sc in zip(solutions, scored, strict=True) for k, v in enumerate(sc)]
    return evald, rows


@dataclass(frozen=True)
class FolderEvaluation:
    """A PRM folder scored on the held-out splits."""

    model: str  # model_version of the folder
    rows: list[dict[str, Any]]  # prm_evaluations rows (plus baselines and references when asked)
    scores: list[dict[str, Any]]  # step_scores rows
    scored: dict[str, list[dict[str, Any]]]  # per split: the solutions with their ``scores``
    bon_n: int  # N of best-of-N actually used (at most the solutions every test problem has)


def usable_bon_n(solutions: Sequence[dict], wanted: int = DEFAULT_BON_N) -> int:
    """``wanted``, or fewer when no test problem has that many solutions (the demo samples 4 per problem).

    >>> usable_bon_n([{"problem_id": "p"}] * 4 + [{"problem_id": "q"}] * 2)
    4
    """
    counts: dict[str, int] = {}
    for s in solutions:
        counts[s["problem_id"]] = counts.get(s["problem_id"], 0) + 1
    return max(1, min(wanted, max(counts.values(), default=1)))


def evaluate_folder(model_dir: Path, heldout: dict[str, list[dict]], label_method: str | None,
                    bon_n: int = DEFAULT_BON_N, baselines: bool = True,
                    experiment: str = "prm_evaluation") -> FolderEvaluation:
    """Score the held-out solutions with the PRM in ``model_dir`` and evaluate it (see the module docstring)."""
    model = model_version(str(model_dir))
    scorer = load_prm(model_dir)
    val, val_scores = _score(scorer, heldout["val"], model)
    test, test_scores = _score(scorer, heldout["test"], model)
    n = usable_bon_n(test, bon_n)
    rows = evaluation_table(model, label_method, val, test, bon_n=n, baselines=baselines, experiment=experiment)
    return FolderEvaluation(model, rows, val_scores + test_scores, {"val": val, "test": test}, n)


def compare_label_sources(root: str | Path, out_root: str | Path, config: ComparisonConfig | None = None,
                          progress: Callable[[str], None] = print) -> list[MethodResult]:
    """Train and evaluate one PRM per ``config.methods``; a method without usable labels gets a row that says
    why (never a silently missing row)."""
    config = config or ComparisonConfig()
    con = connect(root)
    heldout = heldout_solutions(con, stratified_splits(con, config.data), source=config.data.source)
    if not heldout["val"] or not heldout["test"]:
        raise ValueError(f"the held-out splits hold {len(heldout['val'])} validation and {len(heldout['test'])} "
                         "test solutions with exact truth; label more generated problems (or lower train_max_steps)")
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
                             experiment="label_source_comparison")
        own = {r["metric"]: r["value"] for r in ev.rows if r["model"] == ev.model}
        results.append(MethodResult(method, folder, ev.model, {
            "method": method, "label_f1": label_f1, "rollouts_per_step": rollouts_per_step,
            "prm_f1": own.get("processbench_f1"), "bon_acc": own.get(f"bon_acc@{ev.bon_n}"),
            "step_auc": own.get("step_auc"), "bon_n": ev.bon_n, "train_solutions": len(train_ids),
        }, ev.rows, ev.scores))
    return results


def comparison_table(results: Sequence[MethodResult]) -> list[dict[str, Any]]:
    """The headline table: one row per method, then the baselines and best-of-N references on the same test set.

    Keys: ``method``, ``label_f1``, ``rollouts_per_step``, ``prm_f1``, ``bon_acc`` (and ``skipped`` where a
    method could not be trained).
    """
    table = [dict(r.summary) for r in results]
    bon_n = next((r.summary["bon_n"] for r in results if "bon_n" in r.summary), DEFAULT_BON_N)
    rows = [row for r in results for row in r.eval_rows]
    for name in sorted({row["model"] for row in rows} - {r.model for r in results}):
        own = {row["metric"]: row["value"] for row in rows if row["model"] == name}
        table.append({"method": name, "label_f1": None, "rollouts_per_step": None,
                      "prm_f1": own.get("processbench_f1"), "bon_acc": own.get(f"bon_acc@{bon_n}")})
    return table


def comparison_markdown(table: Sequence[dict[str, Any]]) -> str:
    """The headline table as markdown (``-`` = not applicable)."""
    def cell(v: Any) -> str:
        return "-" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v)

    cols = ("method", "label_f1", "rollouts_per_step", "prm_f1", "bon_acc")
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in table:
        if row.get("skipped"):
            lines.append(f"| {row['method']} | skipped: {row['skipped'][:80]} |" + " |" * (len(cols) - 2))
        else:
            lines.append("| " + " | ".join(cell(row.get(c)) for c in cols) + " |")
    return "\n".join(lines)
