"""The README's main command: materialize the whole graph for today's ``arith`` partition, in-process, as the
default recipe (recipes/default.yaml) says; ``--recipe`` runs another one (as ``prm-pipeline run`` does). On the
shipped policy it then labels with the opt-in methods of :data:`DEMO_OPT_IN_LABELS` and audits again, so the label
audit shows them beside MC's and OmegaPRM's.

Run history lands in the project's DAGSTER_HOME, so the run also shows in ``make ui``.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import dagster as dg

from assets.partitions import check_day, partition_key
from assets.resources import default_inbox
from pipelines.inbox import sidecar_recipe, unsuited_policy
from pipelines.recipe import Recipe, RecipeError, load_recipe
from pipelines.run_config import recipe_run_config
from pipelines.runner import LOGGING, execute, merge, print_outcome, run_recipe
from prm.labeling import MCConfig
from prm.models import ARITH_POLICY_NAME, ARITH_PRM_NAME
from prm.tasks import BUILTIN_SOURCES
from warehouse import PROJECT_ROOT, Warehouse, connect, snapshot_versions, today

# (table that must have rows, query): the summary shows each query whose table is filled.
EXAMPLES = [
    ("problems", "SELECT task, n_gold_steps, count(*) AS problems FROM problems GROUP BY ALL ORDER BY ALL"),
    ("solutions", "SELECT p.n_gold_steps, count(*) AS solutions, round(avg(s.is_correct::INT), 2) AS accuracy, "
                  "round(avg((s.first_error_truth >= 0)::INT), 2) AS with_wrong_step "
                  "FROM solutions s JOIN problems p USING (problem_id) GROUP BY 1 ORDER BY 1"),
    ("rollouts", "SELECT step_idx, count(*) AS rollouts, round(avg(is_correct::INT), 2) AS mc "
                 "FROM rollouts GROUP BY 1 ORDER BY 1"),
    ("step_labels", "SELECT solution_id, step_idx, step_text, is_correct_truth AS truth, round(mc_soft, 2) AS mc, "
                    "omegaprm_hard AS omegaprm, sympy_hard AS sympy, judge_hard AS judge, consensus_hard AS consensus "
                    "FROM labeled_steps WHERE solution_id = (SELECT min(solution_id) FROM solutions "
                    "WHERE first_error_truth >= 0) ORDER BY step_idx"),
    ("label_audit", "SELECT method, n_solutions, n_steps, round(step_f1, 3) AS step_f1, "
                    "round(first_error_acc, 3) AS first_error_acc, round(correct_acc, 3) AS correct_acc, "
                    "round(processbench_f1, 3) AS processbench_f1, round(rollouts_per_step, 1) AS rollouts_per_step "
                    "FROM label_audit WHERE day = (SELECT max(day) FROM label_audit) ORDER BY method"),
    # The model registry: what each model was built from (its lineage: SELECT * FROM model_lineage).
    ("models", "SELECT kind, name, version, parent_version, training_tables_json FROM models ORDER BY created_at"),
]


# The embedded default recipe: the demo's policy, budgets, PRM and RL (docs/recipes.md).
DEFAULT_RECIPE = PROJECT_ROOT / "recipes" / "default.yaml"


def demo_recipe(source: str | None = None, recipe_file: str | Path | None = None) -> Recipe:
    """The recipe the demo runs: ``recipe_file``, else the default one, on ``source``; a source with a file in the
    inbox runs its sidecar recipe, and one without a recipe the default policy cannot sample is refused."""
    if recipe_file is not None:
        recipe = load_recipe(recipe_file)
        return replace(recipe, dataset=replace(recipe.dataset, source=source)) if source else recipe
    recipe = load_recipe(DEFAULT_RECIPE)
    if source is None or source in BUILTIN_SOURCES:
        return replace(recipe, dataset=replace(recipe.dataset, source=source or recipe.source))
    sidecar = sidecar_recipe(default_inbox(), source)
    if sidecar is None:
        raise RecipeError(unsuited_policy(source, recipe.policy.model) or f"source {source!r} has no recipe")
    return sidecar


# The opt-in label methods' assets (warehouse.methods.opt_in_label_assets) the demo materializes after its runs, with
# their launchpad config: adaptive MC capped at MC's N, and active labels from the shipped PRM (the demo trains its
# own after labeling): MC on the most unsure quarter of the solutions, the PRM's own (pseudo) labels on the ones it is
# sure of. The MC labels' stored rollouts serve both (no new rollouts, no engine start). Last, after the recipe's runs,
# so no label they wrote (consensus's) combines theirs.
DEMO_OPT_IN_LABELS: dict[str, dict[str, Any]] = {
    "mc_adaptive_labels": {"adaptive_max": MCConfig().n_rollouts},
    "active_labels": {"prm": ARITH_PRM_NAME, "backing": "mc", "rollouts": MCConfig().n_rollouts, "max_share": 0.25,
                      "pseudo_labels": True},
}


def labels_opt_in(recipe: Recipe) -> bool:
    """Whether the demo adds :data:`DEMO_OPT_IN_LABELS` to ``recipe``: on the shipped policy (the shipped PRM reads
    its steps), with MC among its labelers (their rollouts)."""
    return recipe.policy.model == ARITH_POLICY_NAME and (recipe.labels.methods is None or "mc" in recipe.labels.methods)


def opt_in_run_config(recipe: Recipe) -> dict:
    """The run config of the opt-in labels' run: their launchpad config and the recipe's generation resource."""
    return {"ops": {asset: {"config": config} for asset, config in DEMO_OPT_IN_LABELS.items()},
            "resources": recipe_run_config(recipe, "refresh")["resources"]}


def run_opt_in_labels(recipe: Recipe, day: str) -> dg.ExecuteInProcessResult:
    """Materialize :data:`DEMO_OPT_IN_LABELS`' assets on (day, the recipe's source), then ``label_audit`` again
    (it audits every method the partition holds), in one run of the implicit asset job (the refresh job leaves them
    out)."""
    from pipelines.definitions import defs  # after run_recipe set DAGSTER_HOME

    keys = [dg.AssetKey(a) for a in (*DEMO_OPT_IN_LABELS, "label_audit")]
    return execute(defs.resolve_implicit_global_asset_job_def(), dg.DagsterInstance.get(),
                   partition_key=partition_key(day, recipe.source), asset_selection=keys,
                   run_config=merge(LOGGING, opt_in_run_config(recipe)))


def run(day: str, source: str, run_config: dict | None = None, rl: bool = True) -> list[dg.ExecuteInProcessResult]:
    """The default recipe (or ``source``'s sidecar) for (day, source): check the policy, materialize the refresh
    job with ``run_config`` merged in, train and evaluate PRMs on it, then (``rl``) a short GRPO run."""
    recipe = demo_recipe(source)
    return run_recipe(replace(recipe, rl=replace(recipe.rl, run=rl and recipe.rl.run)), day, run_config)


def summary(wh: Warehouse) -> str:
    con = connect(wh.root)
    versions = snapshot_versions(con)
    lines = [f"warehouse: {wh.root} (Delta tables; `.venv/bin/prm-warehouse history TABLE` lists the versions)"]
    filled = set()
    for table in wh.tables():
        (n,) = con.execute(f"SELECT count(*) FROM {table}").fetchall()[0]
        if n:
            filled.add(table)
            lines.append(f"  {table:<14} {n:>8,} rows  version {versions[table]}")
    for table, sql in EXAMPLES:
        if table in filled:
            lines += ["", f".venv/bin/prm-warehouse sql \"{sql}\"", str(con.sql(sql))]
    return "\n".join(lines)


def _day(value: str) -> str:
    try:
        return check_day(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--day", default=today(), type=_day, help="partition day, YYYY-MM-DD (default: today, UTC)")
    parser.add_argument("--source", default=None, help="partition source (default: the recipe's; the default "
                        "recipe's is the built-in generator 'arith')")
    parser.add_argument("--recipe", default=None, help="a recipe file (default: recipes/default.yaml)")
    parser.add_argument("--resample", action="store_true",
                        help="sample the partition's solutions afresh (and drop their labels) instead of resuming")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    resample = {"ops": {"solutions": {"config": {"resample": True}}}} if args.resample else None
    try:
        recipe = demo_recipe(args.source, args.recipe)
        results = run_recipe(recipe, args.day, resample)
        if all(r.success for r in results) and labels_opt_in(recipe):
            results.append(run_opt_in_labels(recipe, args.day))
    except RecipeError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    took = time.perf_counter() - start
    if not print_outcome(results):
        return 1
    print(f"runs {', '.join(r.run_id[:8] for r in results)} succeeded in {took:.0f}s "
          f"for day={args.day} source={recipe.source}\n")
    print(summary(Warehouse()))
    print(model_half(results))
    return 0


# (asset, metadata key, title): the tables the model half prints, in the order of its runs.
MODEL_TABLES = (
    ("prm_evaluation", "shipped_prm", "the shipped PRM (prm/shipped/arith-prm, rebuilt by `make prm`): "
                                      "ProcessBench F1, best-of-N gain over majority vote, step sensitivity and "
                                      "off-policy detection on this partition, beside the constant baseline"),
    ("prm_evaluation", "evaluation", "the PRM on held-out solutions (its label method in the table)"),
    ("prm_evaluation", "step_sensitivity", "its step sensitivity (right vs wrong sibling steps, 95% interval)"),
    ("prm_evaluation", "off_policy", "steps its policy would not write: a right step replaced by a wrong one of each "
                                     "kind, scored below the right step (detection) and below the threshold"),
    ("label_source_comparison", "comparison", "label-source comparison: one small PRM per label source on the same "
                                              "few test problems (a smoke run: its intervals are wide; "
                                              "benchmarks/prm_quality.py measures this at size)"),
    ("rl_run", "comparison", "GRPO on the policy, one arm per reward, same steps (held-out accuracy before/after)"),
)


def model_half(results: list[dg.ExecuteInProcessResult]) -> str:
    """The PRM's evaluation, the label-source comparison and the RL arms, as the runs' metadata holds them."""
    lines = []
    for node, key, title in MODEL_TABLES:
        for result in results:
            if node not in result.job_def.graph.node_names():
                continue
            for mat in result.asset_materializations_for_node(node):
                if key in mat.metadata:
                    lines += ["", f"{title}:", str(mat.metadata[key].value)]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
