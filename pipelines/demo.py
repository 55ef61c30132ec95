"""The README's main command: materialize the whole graph for today's ``arith`` partition, in-process.

Run history lands in the project's DAGSTER_HOME, so the run also shows in ``make ui``.
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid

import dagster as dg

from assets.partitions import check_day, partition_key, register_sources
from pipelines.instance import ensure_dagster_home
from pipelines.recovery import SlotWatcher, owner_tags, release_dead_runs
from warehouse import Warehouse, connect, today
from warehouse.db import snapshot_versions
from warehouse.methods import COMPARED_METHODS

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


def run(day: str, source: str, run_config: dict | None = None, rl: bool = True) -> list[dg.ExecuteInProcessResult]:
    """Check the policy, materialize the refresh job for (day, source), train and evaluate PRMs on it, then
    (``rl``) a short GRPO run of the reward arms on the new PRM."""
    ensure_dagster_home()
    from pipelines.definitions import defs  # after DAGSTER_HOME is set

    instance = dg.DagsterInstance.get()
    # A run killed earlier (kill -9, a closed terminal) still holds its pool slot: free it, or this run waits forever.
    for holder in release_dead_runs(instance):
        _say(f"released pool '{holder.pool}' from dead {holder.describe()}")
    register_sources(instance, [source])
    logging = {"loggers": {"console": {"config": {"log_level": "INFO"}}}}
    warm = _execute(defs.resolve_job_def("warm_start"), instance, run_config=logging)
    if not warm.success:
        return [warm]
    refresh = _execute(defs.resolve_job_def("refresh"), instance, partition_key=partition_key(day, source),
                       run_config={**logging, **(run_config or {})})
    if not refresh.success:
        return [warm, refresh]
    prm = _execute(defs.resolve_job_def("prm"), instance, run_config={**logging, **prm_run_config(source)})
    if not prm.success or not rl:
        return [warm, refresh, prm]
    # assets.rl.RLAssetConfig's defaults are the demo's size: 6 GRPO steps per arm, a minute or two on CPU.
    return [warm, refresh, prm, _execute(defs.resolve_job_def("rl"), instance, run_config=logging)]


def prm_run_config(source: str) -> dict:
    """The model half on the demo's partition, sized to take a minute or two: one PRM on OmegaPRM labels, and
    the label-source comparison (fewer optimizer steps than a real run; see benchmarks/prm.py for that)."""
    data = {"method": "omegaprm", "source": source}
    train = {"max_steps": DEMO_PRM_STEPS}
    return {"ops": {
        "prm_training_set": {"config": data},
        "prm_model": {"config": train},
        "label_source_comparison": {"config": {"methods": DEMO_COMPARED, "data": data, "train": train}},
    }}


# Optimizer steps per PRM in the demo (the LM head, PRMTrainConfig's default head): ~15 passes of 16 over its ~44
# train solutions, ~24 s per PRM with its evaluation on 2 CPU cores.
DEMO_PRM_STEPS = 40
# Every compared label source, the fine-tuned judge and its consensus included.
DEMO_COMPARED = list(COMPARED_METHODS)


def _execute(job: dg.JobDefinition, instance: dg.DagsterInstance, **kwargs) -> dg.ExecuteInProcessResult:
    """Execute in this process, tagged with its pid (so a later run can tell it died) and watched while it
    waits for a pool slot (it says which run holds the slot, and frees the slot if that run is dead)."""
    run_id = str(uuid.uuid4())
    with SlotWatcher(instance, run_id, log=_say):
        return job.execute_in_process(instance=instance, run_id=run_id, tags=owner_tags(), raise_on_error=False,
                                      **kwargs)


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


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
    parser.add_argument("--source", default="arith", help="partition source (default: the built-in generator)")
    parser.add_argument("--resample", action="store_true",
                        help="sample the partition's solutions afresh (and drop their labels) instead of resuming")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    resample = {"ops": {"solutions": {"config": {"resample": True}}}} if args.resample else None
    results = run(args.day, args.source, resample)
    took = time.perf_counter() - start
    for result in results:
        for event in result.get_asset_check_evaluations():
            warn = event.severity == dg.AssetCheckSeverity.WARN
            print(f"check {event.check_name:<34} {'passed' if event.passed else 'warning' if warn else 'FAILED'}")
            if not event.passed and event.description:
                print(f"      {event.description}", file=sys.stderr)
        if not result.success:
            for event in result.all_events:
                if event.is_step_failure:
                    error = event.event_specific_data.error
                    print(f"FAILED {event.step_key}: {error.message.strip()}", file=sys.stderr)
            return 1
    print(f"runs {', '.join(r.run_id[:8] for r in results)} succeeded in {took:.0f}s "
          f"for day={args.day} source={args.source}\n")
    print(summary(Warehouse()))
    print(model_half(results))
    return 0


# (asset, metadata key, title): the tables the model half prints, in the order of its runs.
MODEL_TABLES = (
    ("prm_evaluation", "evaluation", "PRM (OmegaPRM labels) on held-out solutions"),
    ("prm_evaluation", "step_sensitivity", "its step sensitivity (right vs wrong sibling steps, 95% interval)"),
    ("label_source_comparison", "comparison", "label-source comparison (the headline)"),
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
