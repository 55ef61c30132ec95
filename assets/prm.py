"""PRM assets: the training set from the warehouse, the PRM, its evaluation, and the label-source comparison."""

# No `from __future__ import annotations`: Dagster reads Config/resource annotations at definition time.
import dataclasses
import json
import math
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

import dagster as dg

from assets.config_base import CheckedConfig, Mirror, derive
from assets.metadata import md_table
from assets.resources import WarehouseResource
from prm.best_of_n import bon_curve
from prm.evaluation import IN_DISTRIBUTION, columns_from_rows, heldout_solutions, perturbation_markdown
from prm.evaluation.external import evaluate_processbench_file
from prm.evaluation.folder import evaluate_folder
from prm.experiments import (
    ComparisonConfig,
    bon_curves,
    compare_label_sources,
    comparison_markdown,
    comparison_table,
    with_truth_differences,
)
from prm.first_error import as_solutions
from prm.models import weights_digest
from prm.reports import (
    evaluation_markdown,
    plot_best_of_n,
    plot_best_of_n_by_scorer,
    plot_label_sources,
    sensitivity_text,
    unmeasurable_note,
)
from prm.training import (
    SHIPPED_PRM_DIR,
    PRMArtifacts,
    PRMTrainConfig,
    TrainingSet,
    TrainingSetConfig,
    build_training_set,
    evaluate_shipped_on_partition,
    read_prm_card,
    stratified_splits,
    verify_shipped_prm,
)
from warehouse import ModelEntry, connect, register_models, today

LABEL_ASSETS = ["mc_labels", "omegaprm_labels", "progress_labels", "consensus_labels"]


def trained_prm(artifacts: PRMArtifacts) -> Path:
    """The newest PRM the prm_model asset trained; a Failure saying what to do when there is none (or the pointer
    to it is malformed)."""
    try:
        return artifacts.trained_model()
    except (FileNotFoundError, ValueError) as exc:
        raise dg.Failure(str(exc)) from exc


class PRMDataConfig(derive(Mirror(
        TrainingSetConfig,
        defaults={
            "method": "omegaprm",  # the library has no default: the labels the demo trains on
            # A day of the demo holds ~24 problems: larger shares than the library's 0.1/0.2 keep both outcomes in each.
            "val_share": 0.25,  # problems for the threshold and the best-of-N aggregation
            "test_share": 0.35,  # held-out problems
        },
        types={"source": str | None},  # one warehouse source, or every source (the library also takes a tuple)
))):
    """Which labels train the PRM and how problems are split (prm.training.TrainingSetConfig's fields)."""


class PRMTrainAssetConfig(derive(Mirror(PRMTrainConfig, exclude={"label_kind"}))):
    """The PRM run: prm.training.PRMTrainConfig's fields (by default the LM-head PRM fine-tuned from the policy);
    label_kind comes from the training set (``to_library(label_kind=...)``)."""


@dg.asset(group_name="prm", kinds={"duckdb"}, deps=LABEL_ASSETS,
          automation_condition=dg.AutomationCondition.eager(),
          description="PRM training rows (TRL stepwise supervision) from the warehouse's step labels, split by "
          "problem; re-materializes when new labeled partitions land.")
def prm_training_set(context: dg.AssetExecutionContext, config: PRMDataConfig,
                     warehouse: WarehouseResource) -> dg.MaterializeResult:
    ts = build_training_set(warehouse.get().root, config.to_library())
    folder = ts.save(PRMArtifacts.default().training_set)
    s = ts.stats
    splits = [{"split": k, "solutions": s.solutions.get(k, 0), "problems": s.problems.get(k, 0),
               "good steps": s.good_steps.get(k, 0), "bad steps": s.bad_steps.get(k, 0)}
              for k in ("train", "val", "test")]
    context.log.info(f"training set for {config.method}: {s.solutions}")
    return dg.MaterializeResult(metadata={
        "path": dg.MetadataValue.path(str(folder)), "method": config.method,
        "dagster/row_count": len(ts.rows), "splits": md_table(splits),
        "dropped": md_table([{"unlabeled": s.dropped_unlabeled, "partly labeled": s.dropped_partial,
                              "not consensus": s.dropped_not_consensus, "balance": s.dropped_by_balance}]),
        # The Delta versions read: `prm-warehouse sql --version steps=N ...` reads this exact data again.
        "warehouse_versions": md_table([{"table": t, "version": v} for t, v in ts.warehouse_versions.items()
                                        if v is not None]),
    })


@dg.asset(group_name="prm", kinds={"pytorch", "transformers"}, pool="engine", deps=["prm_training_set"],
          description="A PRM fine-tuned from the policy: by default its LM head scores each step's tokens against the "
          "frozen policy (head='lm'); head='classifier' reads a two-class head at each step tag (vLLM-servable).")
def prm_model(context: dg.AssetExecutionContext, config: PRMTrainAssetConfig,
              warehouse: WarehouseResource) -> dg.MaterializeResult:
    from prm.training import train_prm

    artifacts = PRMArtifacts.default()
    ts = TrainingSet.load(artifacts.training_set)
    # A new folder per training: an earlier registry row's uri keeps its weights whatever is trained after it.
    folder = artifacts.new_model(lambda out: train_prm(ts, out, config.to_library(label_kind=ts.config.label_kind)))
    card = read_prm_card(folder)
    context.log.info(f"PRM at {folder}")
    final = {k: v for k, v in (card.get("final_metrics") or {}).items()
             if isinstance(v, int | float) and not isinstance(v, bool)}
    # The registry names the table versions the training set read: connect(root, versions=...) rebuilds it.
    base = str(card.get("base_model_version") or "")
    entry = ModelEntry(name=f"prm-{ts.config.method}", version=weights_digest(folder), kind="prm", uri=str(folder),
                       parent_version=base.rpartition("@")[2] if "@" in base else None,  # the backbone's policy
                       training_tables={t: v for t, v in ts.warehouse_versions.items() if v is not None},
                       training={**asdict(ts.config), "base_model": card.get("base_model"),
                                 "max_steps": config.max_steps},
                       metrics={k: v for k, v in final.items() if math.isfinite(v)})
    register_models(warehouse.get(), [entry], source=_partition_source(ts.config.source), day=today(),
                    run_id=context.run_id, writer="prm_model")
    artifacts.publish(folder)  # after the registration: the newest PRM on disk is always a registered one
    return dg.MaterializeResult(metadata={"path": dg.MetadataValue.path(str(folder)),
                                          "label_method": ts.config.method, "version": entry.version, **final})


def _partition_source(source: str | tuple[str, ...] | None) -> str:
    """The registry partition of a model trained on ``source``: that source, "all" for every source or several."""
    return source if isinstance(source, str) else "all"


def _heldout(config: TrainingSetConfig, warehouse: WarehouseResource) -> dict:
    con = connect(warehouse.get().root)
    return heldout_solutions(con, stratified_splits(con, config), source=config.source)


class PRMEvalConfig(CheckedConfig):
    """Extra test sets for the PRM evaluation."""

    # A ProcessBench-format JSONL file (prm.export writes them; Qwen/ProcessBench's layout): an external
    # step-labelled test set, for data without step truth of its own (GSM8K, MATH). None: the warehouse only.
    processbench_file: str | None = None
    # Evaluate the shipped PRM (prm/shipped/arith-prm, rebuilt by `make prm`) beside the trained one, when
    # both read the same policy's steps: on the partition's problems outside validation, none of which it trained on.
    shipped: bool = True


@dg.asset(group_name="prm", kinds={"pytorch", "delta"}, pool="engine", deps=["prm_model"],
          description="The PRM on held-out solutions: best-of-N, the PRM-weighted vote, majority vote, random pick "
          "and oracle against the gold answer; where exact step truth exists, ProcessBench F1 (threshold chosen on "
          "validation), step ROC-AUC, step sensitivity and off-policy perturbation detection ('no step truth' where "
          "it does not), beside two baselines, with 95% intervals over test problems; optionally an external "
          "ProcessBench-format test set.")
def prm_evaluation(context: dg.AssetExecutionContext, warehouse: WarehouseResource,
                   config: PRMEvalConfig) -> dg.MaterializeResult:
    ts_config = TrainingSet.load(PRMArtifacts.default().training_set).config
    model = trained_prm(PRMArtifacts.default())  # resolved once: a retrain meanwhile cannot mix two PRMs
    ev = evaluate_folder(model, _heldout(ts_config, warehouse), ts_config.method)
    if config.processbench_file:
        ev_rows = ev.rows + _external(model, ev.rows, ev.model, config.processbench_file, ts_config.method)
        ev = dataclasses.replace(ev, rows=ev_rows)
    wh = warehouse.get()
    kw = {"source": ts_config.source or "all", "day": today(), "run_id": context.run_id}
    wh.write("prm_evaluations", ev.rows, writer="prm_evaluation", **kw)
    # One set of scores per PRM: evaluating the same model again (a rerun, another day) replaces its scores.
    wh.write("step_scores", ev.scores, writer="prm_evaluation", replace_where={"model": ev.model}, **kw)
    table = unmeasurable_note(ev.rows) + evaluation_markdown(ev.rows)
    context.log.info("PRM evaluation\n" + table)
    curve = bon_curve(as_solutions(ev.scored["val"]), as_solutions(ev.scored["test"]),
                      ns=[n for n in (1, 2, 4, 8) if n <= ev.bon_n])
    plot = plot_best_of_n(curve, PRMArtifacts.default().plot("best_of_n"))
    sens = next(r for r in ev.rows if r["model"] == ev.model and r["metric"] == "step_sensitivity")
    off_policy = {split: columns_from_rows(ev.rows, ev.model, split) for split in ev.perturbations}
    shipped = {}
    if config.shipped and _reads_shipped_policy(model):
        shipped_rows, shipped_table = _shipped_evaluation(ts_config, warehouse)
        wh.write("prm_evaluations", shipped_rows, writer="prm_evaluation", **kw)
        context.log.info("shipped PRM\n" + shipped_table)
        shipped = {"shipped_prm": dg.MetadataValue.md(shipped_table)}
    return dg.MaterializeResult(metadata={**shipped,
        "model": ev.model, "best_of_n": ev.bon_n, "evaluation": dg.MetadataValue.md(table),
        "step_sensitivity": sensitivity_text(sens),
        "off_policy": dg.MetadataValue.md("\n\n".join(f"{split}:\n\n{perturbation_markdown(cols)}"
                                                        for split, cols in off_policy.items() if cols)
                                          or "no perturbation pairs: the test split has no right steps with step "
                                             "truth"),
        "dagster/row_count": len(ev.rows), "best_of_n_plot": dg.MetadataValue.path(str(plot)),
    })


def _reads_shipped_policy(trained: Path) -> bool:
    """Whether the trained PRM and the shipped one are fine-tuned from the same policy (so the shipped PRM reads
    this partition's steps); a shipped folder that fails its digest check fails the run."""
    if not SHIPPED_PRM_DIR.is_dir():
        return False
    try:
        verify_shipped_prm(SHIPPED_PRM_DIR)
    except ValueError as exc:
        raise dg.Failure(str(exc)) from exc
    return read_prm_card(trained).get("base_model") == read_prm_card(SHIPPED_PRM_DIR).get("base_model")


def _shipped_evaluation(config: TrainingSetConfig, warehouse: WarehouseResource) -> tuple[list[dict], str]:
    return evaluate_shipped_on_partition(connect(warehouse.get().root), config)


def _external(folder: Path, rows: list[dict], model: str, path: str, label_method: str) -> list[dict]:
    """The rows of the PRM in ``folder`` on the ProcessBench file at ``path``, at the threshold the warehouse's
    validation chose (when it could choose one); a malformed or missing file fails the run with the line and what
    to fix."""
    f1 = next(r for r in rows if r["model"] == model and r["metric"] == "processbench_f1")
    detail = json.loads(f1["detail_json"] or "{}")
    chosen = detail.get("chosen_on") == "validation"
    try:
        return evaluate_processbench_file(folder, path, label_method,
                                          threshold=detail["threshold"] if chosen else None,
                                          chosen_on="validation" if chosen else None)
    except (ValueError, FileNotFoundError) as exc:
        raise dg.Failure(f"processbench_file: {exc}") from exc


class ComparisonAssetConfig(derive(Mirror(
        ComparisonConfig,
        types={"data": PRMDataConfig, "train": PRMTrainAssetConfig},
        # The asset's own sections: the demo's split (the library's default trains on truth) and PRM run.
        defaults={"data": PRMDataConfig(), "train": PRMTrainAssetConfig()},
))):
    """The methods compared (prm.experiments.ComparisonConfig's fields); every PRM shares the data split and the
    training run settings."""

    def to_library(self, **fixed: Any) -> ComparisonConfig:
        # Every PRM trains on the kind of label the data section reads.
        return super().to_library(**{"train": self.train.to_library(label_kind=self.data.label_kind), **fixed})


@dg.asset(group_name="prm", kinds={"pytorch", "delta"}, pool="engine", deps=["prm_training_set"],
          description="One PRM per label method on the same problems and held-out test sets: label F1 vs truth, "
          "rollouts paid per step, PRM ProcessBench F1, step sensitivity, best-of-N and its gain over majority "
          "vote, each with a 95% interval over test problems. The product's headline table.")
def label_source_comparison(context: dg.AssetExecutionContext, config: ComparisonAssetConfig,
                            warehouse: WarehouseResource) -> dg.MaterializeResult:
    data = config.data
    cfg = config.to_library()
    with tempfile.TemporaryDirectory(prefix="prm-compare-", dir=PRMArtifacts.default().root.parent) as scratch:
        results = compare_label_sources(warehouse.get().root, scratch, cfg, progress=context.log.info)
    table = with_truth_differences(comparison_table(results), results, data.train_max_steps)
    rows = [row for r in results for row in r.eval_rows]
    warehouse.get().write("prm_evaluations", rows, source=data.source or "all", day=today(), run_id=context.run_id,
                          writer="label_source_comparison")
    markdown = comparison_markdown(table)
    context.log.info("label-source comparison\n" + markdown)
    first_test = next((r["test"] for r in table if r.get("test")), None)
    plotted = [r for r in table if r.get("prm_f1") is not None and r.get("test") == first_test]
    meta = {"comparison": dg.MetadataValue.md(markdown), "dagster/row_count": len(rows)}
    if plotted:
        plot = plot_label_sources(plotted, PRMArtifacts.default().plot("label_sources"),
                                  metrics=("prm_f1", "step_sensitivity", "bon_acc"),
                                  title=f"PRM quality by label source ({first_test} test, 95% intervals)")
        meta["plot"] = dg.MetadataValue.path(str(plot))
    curves = bon_curves(results, data.train_max_steps, first_test or IN_DISTRIBUTION)
    if curves:
        bon_plot = plot_best_of_n_by_scorer(curves, PRMArtifacts.default().plot("best_of_n_by_source"),
                                            title=f"Best-of-N by label source ({first_test} test)")
        meta["best_of_n_plot"] = dg.MetadataValue.path(str(bon_plot))
    return dg.MaterializeResult(metadata=meta)
