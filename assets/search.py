"""The search asset: best-of-N, the PRM-weighted vote, majority vote, beam search and DVTS with the latest PRM at
equal token budgets."""

# No `from __future__ import annotations`: Dagster reads Config/resource annotations at definition time.
import json

import dagster as dg

from assets.config_base import CheckedConfig
from assets.metadata import md_table
from assets.prm import trained_prm
from assets.resources import GenerationResource, WarehouseResource
from prm.files import atomic_write_text
from prm.models import model_version
from prm.scoring import load_prm
from prm.search import (
    SEARCH_METHODS,
    compare_at_budgets,
    heldout_problems,
    plot_accuracy_vs_budget,
    prefix_scorer,
    warehouse_problems,
)
from prm.training import PRMArtifacts, TrainingSet, stratified_splits
from warehouse import connect

RESULT_FILE = "search.json"  # beside the PRM: the comparison's rows, read by the check


class SearchAssetConfig(CheckedConfig):
    """A small comparison (minutes on a CPU); ``benchmarks/search.py`` is the full one."""

    problems: int = 8  # held-out problems: generated word problems, or the source's below
    n_ops: list[int] = [6, 8]  # generated problems only
    # A warehouse source (GSM8K, MATH, a user's file: any problems with a gold answer) whose problems the PRM held
    # out (its training set's test split) are searched; None: generated arithmetic (prm.search.run.heldout_problems).
    source: str | None = None
    budgets: list[int] = [480, 960]  # generated tokens per problem
    seeds: list[int] = [0, 1]
    m: int = 4  # expansions per beam per step
    aggregation: str = "last"


@dg.asset(group_name="search", kinds={"vllm", "pytorch"}, pool="engine", deps=["prm_model"],
          description="Test-time search with the latest PRM at equal generated-token budgets: best-of-N, the "
          "PRM-weighted vote, majority vote, step-level beam search and DVTS on generated arithmetic or on a source's "
          "held-out problems with a gold answer, accuracy against the gold answer with 95% bootstrap intervals over "
          "problems, and the tokens each method generated and ran through the PRM (new steps scored from their "
          "prefix's cached keys/values).")
def search_comparison(context: dg.AssetExecutionContext, config: SearchAssetConfig,
                      generation: GenerationResource, warehouse: WarehouseResource) -> dg.MaterializeResult:
    prm_folder = trained_prm(PRMArtifacts.default())
    if config.source is None:
        problems = heldout_problems(config.problems, n_ops=tuple(config.n_ops))
    else:
        problems = _source_problems(warehouse, config.source, config.problems)
    scorer = load_prm(prm_folder)
    result = compare_at_budgets(problems, generation.get(), scorer, config.budgets, config.seeds,
                                m=config.m, aggregation=config.aggregation, progress=context.log.info)
    rows = [{"method": r["method"], "budget": r["budget"], "accuracy": round(r["accuracy"], 3),
             "accuracy_ci": f"[{r['accuracy_ci'][0]:.2f}, {r['accuracy_ci'][1]:.2f}]", "n": r["n"], "m": r["m"],
             "generated_tokens": round(r["generated_tokens"]), "prm_tokens": round(r["prm_tokens"])}
            for r in result.methods]
    title = f"{len(problems)} problems x {len(config.seeds)} seeds"
    plot = plot_accuracy_vs_budget(result.methods, PRMArtifacts.default().plot("search"), title=title)
    plot_total = plot_accuracy_vs_budget(result.methods, PRMArtifacts.default().plot("search_total_tokens"),
                                         title=title, total_tokens=True)
    results = json.dumps({"budgets": config.budgets, "methods": result.methods, "vs_majority": result.vs_majority,
                          "vs_best_of_n": result.vs_best_of_n})
    atomic_write_text(PRMArtifacts.default().file(RESULT_FILE), results)
    return dg.MaterializeResult(metadata={
        "comparison": md_table(rows), "plot": dg.MetadataValue.path(str(plot)),
        "plot_total_tokens": dg.MetadataValue.path(str(plot_total)),
        "prm": model_version(str(prm_folder)), "solution_tokens": result.solution_tokens,
        "prm_scoring": "prefix cache" if prefix_scorer(scorer) is not scorer else "full rescoring",
        "prm_tokens_total": round(sum(r["prm_tokens"] for r in result.methods) * len(problems) * len(config.seeds)),
        "dagster/row_count": len(rows),
    })


def _source_problems(warehouse: WarehouseResource, source: str, n: int) -> list:
    """Up to ``n`` problems of ``source`` that the PRM held out (its training set's test split); a Failure that
    says what to do when there are none."""
    root = warehouse.get().root
    try:
        ts_config = TrainingSet.load(PRMArtifacts.default().training_set).config
        return warehouse_problems(root, n, source=source, split_of=stratified_splits(connect(root), ts_config))
    except (ValueError, FileNotFoundError) as exc:
        raise dg.Failure(str(exc)) from exc


@dg.asset_check(asset=search_comparison, blocking=True,
                description="Every method has a row at every budget, its accuracy inside its 95% interval.")
def search_comparison_complete() -> dg.AssetCheckResult:
    found = json.loads((PRMArtifacts.default().file(RESULT_FILE)).read_text())
    rows = {(r["method"], r["budget"]): r for r in found["methods"]}
    missing = [(m, b) for m in SEARCH_METHODS for b in found["budgets"] if (m, b) not in rows]
    bad = [key for key, r in rows.items() if not r["accuracy_ci"][0] <= r["accuracy"] <= r["accuracy_ci"][1]]
    return dg.AssetCheckResult(passed=not missing and not bad, metadata={"rows": len(rows), "missing": len(missing)},
                               description=f"missing {missing[:4]}; accuracy outside its interval {bad[:4]}"
                               if missing or bad else f"{len(rows)} rows, each inside its interval")
