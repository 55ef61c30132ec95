"""``python -m pipelines.flywheel --rounds 2``: run the next flywheel rounds in-process, each a partition of the
``flywheel`` job, into the project's DAGSTER_HOME (so they show in ``make ui``), then print the registry's lineage.

Each call continues where the last stopped: an unfinished round resumes, a finished one is not run again.
"""

from __future__ import annotations

import argparse
import json
import sys

import dagster as dg

from assets.partitions import ROUNDS
from pipelines.instance import ensure_dagster_home
from pipelines.recipe import RecipeError, load_recipe
from pipelines.recovery import release_dead_runs
from pipelines.run_config import recipe_run_config
from pipelines.runner import execute as _execute
from pipelines.runner import merge
from pipelines.runner import say as _say
from pipelines.schedules import next_round
from warehouse import Warehouse, connect

LINEAGE_SQL = ("SELECT name, kind, round, version, parent_version, training_tables_json, metrics_json FROM models "
               "WHERE source LIKE 'flywheel-r%' ORDER BY created_at")


def run(rounds: int, run_config: dict | None = None) -> list[dg.ExecuteInProcessResult]:
    """Run ``rounds`` more rounds (or the unfinished one first); stops at the first that fails."""
    ensure_dagster_home()
    from pipelines.definitions import defs  # after DAGSTER_HOME is set

    job = defs.resolve_job_def("flywheel")
    resolved = dg.validate_run_config(job, run_config or {})  # a config that does not fit fails here, before any round
    check_settings(resolved)
    instance = dg.DagsterInstance.get()
    # A round killed earlier (kill -9) may still hold its pool slot: free it, or this run waits forever.
    for holder in release_dead_runs(instance):
        _say(holder.released())
    results = []
    for _ in range(rounds):
        existing = list(instance.get_dynamic_partitions(ROUNDS.name))
        k = next_round(existing, set(instance.get_materialized_partitions(dg.AssetKey("flywheel_policy"))))
        if k not in existing:
            instance.add_dynamic_partitions(ROUNDS.name, [k])
        _say(f"flywheel round {k}")
        result = _execute(job, instance, partition_key=k, run_config=run_config or {})
        results.append(result)
        if not result.success:
            break
    return results


class UsageError(ValueError):
    """A command-line value the flywheel cannot run with; the message says what to pass instead."""


def check_settings(resolved: dict) -> None:
    """Build the library configs of a run config Dagster accepted (``dg.validate_run_config``'s result), so a
    value they refuse (a NaN tolerance, a count of 0) is a UsageError now, not a failed step inside round k."""
    from assets.resources import FlywheelResource, GenerationResource

    resources = resolved.get("resources", {})
    for name, build in (("flywheel", lambda c: FlywheelResource(**c).get()),
                        ("generation", lambda c: GenerationResource(**c).config())):
        values = (resources.get(name) or {}).get("config") or {}
        try:
            build(values)
        except (ValueError, TypeError) as exc:
            raise UsageError(f"resources.{name}.config: {' '.join(str(exc).split())} - fix --config (or the "
                             "recipe)") from None


def parse_config(text: str | None) -> dict | None:
    """The ``--config`` run config: a JSON object, or a UsageError that says where it breaks.

    >>> parse_config('{"resources": {}}')
    {'resources': {}}
    >>> try:
    ...     parse_config('{"resources": ')
    ... except UsageError as exc:
    ...     print(str(exc).split(";")[0])
    --config is not JSON (Expecting value at character 14)
    """
    if text is None:
        return None
    example = """e.g. '{"resources": {"flywheel": {"config": {"per_level": 4}}}}'"""
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        where = f"{exc.msg} at character {exc.pos}" if isinstance(exc, json.JSONDecodeError) else "nested too deep"
        raise UsageError(f"--config is not JSON ({where}); pass a JSON object, {example}") from None
    if not isinstance(value, dict):
        raise UsageError(f"--config is a JSON {type(value).__name__}, not an object; pass a JSON object, {example}")
    return value


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=1, help="rounds to run now (>= 1)")
    p.add_argument("--config", default=None, help="a JSON run config, e.g. resources.flywheel.config overrides")
    p.add_argument("--recipe", default=None, help="a recipe (recipes/*.yaml): round 0 samples its policy")
    args = p.parse_args(argv)
    try:
        if args.rounds < 1:
            raise UsageError(f"--rounds {args.rounds} runs no round; pass --rounds 1 or more (rounds to run now)")
        config = parse_config(args.config)
        from_recipe = recipe_run_config(load_recipe(args.recipe), "flywheel") if args.recipe else None
        results = run(args.rounds, merge(from_recipe, config))
    except (UsageError, RecipeError) as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    except dg.DagsterInvalidConfigError as exc:
        errors = "; ".join(e.message for e in exc.errors) or str(exc).splitlines()[0]
        print(f"Error: the run config does not fit the flywheel job: {errors} - fix --config (or the recipe)",
              file=sys.stderr)
        return 1
    for name, kind, k, version, parent, *_ in connect(Warehouse().root).execute(LINEAGE_SQL).fetchall():
        print(f"{kind:6} {name:22} round {k}  {version}  <- {parent}")
    return 0 if results and all(r.success for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
