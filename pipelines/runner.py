"""Run a recipe in-process: stage its dataset in the inbox, register its source, then the refresh (problems ->
solutions -> labels), prm (training set -> PRM -> evaluation) and optionally rl jobs; report each stage."""

from __future__ import annotations

import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import dagster as dg

from assets.partitions import partition_key, register_sources
from assets.resources import default_inbox
from pipelines.inbox import stage_dataset
from pipelines.instance import ensure_dagster_home
from pipelines.recipe import Recipe, RecipeError
from pipelines.recovery import SlotWatcher, owner_tags, release_dead_runs
from pipelines.run_config import recipe_run_config, recipe_selection
from prm.models import ARITH_POLICY_NAME, JUDGE_NAME, SMOLLM2_NAME
from warehouse import Warehouse

LOGGING = {"loggers": {"console": {"config": {"log_level": "INFO"}}}}


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def merge(*configs: dict | None) -> dict:
    """Run configs merged key by key, later ones winning.

    >>> merge({"ops": {"a": {"config": {"x": 1}}}}, {"ops": {"a": {"config": {"y": 2}}}})
    {'ops': {'a': {'config': {'x': 1, 'y': 2}}}}
    """
    out: dict = {}
    for config in configs:
        for key, value in (config or {}).items():
            out[key] = merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def execute(job: dg.JobDefinition, instance: dg.DagsterInstance, log: Callable[[str], None] = say,
            **kwargs) -> dg.ExecuteInProcessResult:
    """Execute in this process, tagged with its pid (so a later run can tell it died) and watched while it
    waits for a pool slot (it says which run holds the slot, and frees the slot if that run is dead)."""
    run_id = str(uuid.uuid4())
    with SlotWatcher(instance, run_id, log=log):
        return job.execute_in_process(instance=instance, run_id=run_id, tags=owner_tags(), raise_on_error=False,
                                      **kwargs)


def _selection(recipe: Recipe, job: str) -> dict:
    keys = recipe_selection(recipe, job)
    return {"asset_selection": [dg.AssetKey(k) for k in keys]} if keys else {}


def run_recipe(recipe: Recipe, day: str, refresh_config: dict | None = None) -> list[dg.ExecuteInProcessResult]:
    """The recipe's jobs for (day, its source), each after the last succeeded; ``refresh_config`` is merged into
    the refresh run's config (e.g. ``resample``). Run history lands in DAGSTER_HOME, so ``make ui`` shows it."""
    ensure_dagster_home()
    from pipelines.definitions import defs  # after DAGSTER_HOME is set

    stage_dataset(recipe, default_inbox())
    instance = dg.DagsterInstance.get()
    # A run killed earlier (kill -9, a closed terminal) still holds its pool slot: free it, or this run waits forever.
    for holder in release_dead_runs(instance):
        say(holder.released())
    register_sources(instance, [recipe.source])
    results = []
    if recipe.policy.model == ARITH_POLICY_NAME:  # the shipped policy: check (or rebuild) it first
        results.append(execute(defs.resolve_job_def("warm_start"), instance, run_config=LOGGING))
        if not results[-1].success:
            return results
    results.append(execute(defs.resolve_job_def("refresh"), instance, partition_key=partition_key(day, recipe.source),
                           run_config=merge(LOGGING, recipe_run_config(recipe, "refresh"), refresh_config),
                           **_selection(recipe, "refresh")))
    if not results[-1].success:
        return results
    results.append(execute(defs.resolve_job_def("prm"), instance,
                           run_config=merge(LOGGING, recipe_run_config(recipe, "prm")), **_selection(recipe, "prm")))
    if results[-1].success and recipe.rl.run:
        results.append(execute(defs.resolve_job_def("rl"), instance,
                               run_config=merge(LOGGING, recipe_run_config(recipe, "rl"))))
    return results


@dataclass(frozen=True)
class StageRow:
    """One materialized asset of a run: rows written and the step's seconds."""

    job: str
    asset: str
    rows: int | None
    seconds: float | None


def stage_rows(results: list[dg.ExecuteInProcessResult], instance: dg.DagsterInstance) -> list[StageRow]:
    """Per asset of every run: the row count its materialization reported and how long its step took."""
    out = []
    for result in results:
        stats = {s.step_key: s for s in instance.get_run_step_stats(result.run_id)}
        started = sorted(stats, key=lambda k: stats[k].start_time or 0.0)
        nodes = set(result.job_def.graph.node_names())
        for node in started:
            mats = result.asset_materializations_for_node(node) if node in nodes else []
            if not mats:  # an asset check, or a step that failed (the checks and failures print above)
                continue
            rows = mats[-1].metadata.get("dagster/row_count")
            stat = stats[node]
            took = stat.end_time - stat.start_time if stat.end_time and stat.start_time else None
            out.append(StageRow(result.job_def.name, node, rows.value if rows is not None else None, took))
    return out


def answer_rates(wh: Warehouse, source: str, day: str) -> dict[str, dict[str, float | int]]:
    """For solutions and rollouts of the partition: rows, share with an extracted answer, share correct."""
    out = {}
    for table in ("solutions", "rollouts"):
        rows = wh.read_partition(table, source, day).select(["final_answer", "is_correct"]).to_pylist()
        if rows:
            out[table] = {"rows": len(rows),
                          "extracted": sum(r["final_answer"] not in (None, "") for r in rows) / len(rows),
                          "correct": sum(bool(r["is_correct"]) for r in rows) / len(rows)}
    return out


def stage_report(results: list[dg.ExecuteInProcessResult], instance: dg.DagsterInstance, wh: Warehouse,
                 source: str, day: str) -> str:
    """The per-stage table `prm-pipeline run` prints: rows written and seconds per asset, then answers."""
    lines = [f"{'job':<8} {'asset':<26} {'rows':>8} {'seconds':>8}"]
    for row in stage_rows(results, instance):
        rows = "-" if row.rows is None else f"{row.rows:,}"
        took = "-" if row.seconds is None else f"{row.seconds:.1f}"
        lines.append(f"{row.job:<8} {row.asset:<26} {rows:>8} {took:>8}")
    for table, rate in answer_rates(wh, source, day).items():
        lines.append(f"{table} of {source} {day}: {rate['rows']:,} rows, answer extracted {rate['extracted']:.1%}, "
                     f"correct against gold {rate['correct']:.1%}")
    return "\n".join(lines)


def describe_model(name: str) -> str:
    """What ``name`` resolves to, without loading (or converting, or downloading) the model.

    >>> describe_model("Qwen/Qwen2.5-Math-1.5B-Instruct")
    "hub id 'Qwen/Qwen2.5-Math-1.5B-Instruct': not loaded by a dry run; the engine downloads it on first use ..."
    """
    from prm.models import resolve_model, smollm2_gguf_path

    try:
        if name in (SMOLLM2_NAME, JUDGE_NAME):
            return f"registered {name!r}: converted on first use from {smollm2_gguf_path()}"
        resolved = resolve_model(name)
    except FileNotFoundError as exc:
        raise RecipeError(str(exc)) from None
    if isinstance(resolved, Path):
        return f"{name!r}: the local folder {resolved}"
    return (f"hub id {name!r}: not loaded by a dry run; the engine downloads it on first use (needs the hub, or the "
            "model in the local Hugging Face cache)")


def print_outcome(results: list[dg.ExecuteInProcessResult]) -> bool:
    """Print every asset check's verdict (stdout) and each failed step's error (stderr); whether all runs passed."""
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
            return False
    return True
