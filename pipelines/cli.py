"""``prm-pipeline``: run a recipe end to end, or register a source for Dagster's dynamic partitions.

Example::

    prm-pipeline run recipes/smollm2-gsm8k.yaml --set sampling.n=2 --dry-run
    prm-pipeline run recipes/smollm2-gsm8k.yaml
    prm-pipeline register-source gsm8k

Data, Dagster home and inbox follow ``PRM_DATA_ROOT``, ``DAGSTER_HOME`` and ``PRM_INBOX`` (docs/recipes.md).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import click

from pipelines.recipe import Recipe, RecipeError, load_recipe


def _day(ctx: click.Context, param: click.Parameter, value: str | None) -> str:
    from assets.partitions import check_day
    from warehouse import today

    try:
        return check_day(value or today())
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


@click.group()
def main() -> None:
    """Process-reward-model pipeline: one recipe file, one command (docs/recipes.md)."""


@main.command()
@click.argument("recipe_file", metavar="RECIPE", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--set", "overrides", multiple=True, metavar="SECTION.FIELD=VALUE",
              help="override one recipe field (the value read as YAML), e.g. --set sampling.n=2; repeatable")
@click.option("--day", callback=_day, help="partition day, YYYY-MM-DD (default: today, UTC)")
@click.option("--dry-run", is_flag=True, help="validate the recipe, check its dataset and resolve its models "
              "without loading them; print the run config of each job")
@click.option("--resample", is_flag=True, help="sample the partition's solutions afresh instead of resuming")
def run(recipe_file: Path, overrides: tuple[str, ...], day: str, dry_run: bool, resample: bool) -> None:
    """Materialize problems -> solutions -> labels -> PRM -> evaluation for RECIPE's source on DAY.

    Example: prm-pipeline run recipes/smollm2-gsm8k.yaml --set dataset.limit=4
    """
    try:
        recipe = load_recipe(recipe_file, overrides)
        if dry_run:
            click.echo(dry_run_text(recipe, day))
            return
    except RecipeError as exc:
        raise click.ClickException(str(exc)) from None
    sys.exit(run_and_report(recipe, day, resample))


def run_and_report(recipe: Recipe, day: str, resample: bool = False) -> int:
    """Run ``recipe`` for ``day`` and print each stage, the checks and the answers; the exit code."""
    import dagster as dg

    from pipelines.demo import model_half
    from pipelines.runner import print_outcome, run_recipe, stage_report
    from warehouse import Warehouse

    start = time.perf_counter()
    try:
        results = run_recipe(recipe, day, {"ops": {"solutions": {"config": {"resample": True}}}} if resample else None)
    except RecipeError as exc:
        click.echo(f"Error: {exc}", err=True)
        return 1
    took = time.perf_counter() - start
    ok = print_outcome(results)
    click.echo(stage_report(results, dg.DagsterInstance.get(), Warehouse(), recipe.source, day))
    click.echo(model_half(results))
    verdict = "succeeded" if ok else "FAILED"
    click.echo(f"\nrecipe {recipe.name!r}: runs {', '.join(r.run_id[:8] for r in results)} {verdict} in {took:.0f}s "
               f"for day={day} source={recipe.source} policy={recipe.policy.model}")
    return 0 if ok else 1


def dry_run_text(recipe: Recipe, day: str) -> str:
    """What a dry run prints: the models as they resolve (none loaded), the dataset's usable rows, the configs."""
    import tempfile

    from pipelines.inbox import stage_dataset
    from pipelines.runner import describe_model
    from prm.tasks import load_problems

    lines = [f"recipe {recipe.name!r} is valid; day {day}, source {recipe.source!r}"]
    for role, name in (("policy", recipe.policy.model), ("PRM backbone", recipe.prm_base_model),
                       ("RL policy", recipe.rl_policy), ("search policy", recipe.search_policy)):
        lines.append(f"{role:<14} {describe_model(name)}")
    if recipe.dataset.path is not None:
        with tempfile.TemporaryDirectory() as scratch:
            staged = stage_dataset(recipe, Path(scratch))
            try:
                loaded = load_problems(staged, source=recipe.source, limit=recipe.dataset.limit)
            except ValueError as exc:
                raise RecipeError(f"dataset {recipe.dataset.file()}: {exc}") from None
        lines.append(f"dataset        {recipe.dataset.file()}: {len(loaded.records)} problems with a gold answer, "
                     f"{len(loaded.rejected)} rows rejected, {len(loaded.duplicates)} repeated")
    for job in ("refresh", "prm", *(("rl",) if recipe.rl.run else ())):
        selection = recipe.selection(job)
        lines.append(f"\n{job} run config" + (f" (assets {selection})" if selection else "") + ":")
        lines.append(json.dumps(recipe.to_run_config(job), indent=1))
    return "\n".join(lines)


@main.command("register-source")
@click.argument("name")
def register_source(name: str) -> None:
    """Add NAME to the dynamic source partitions, so `dagster asset materialize` and the UI can launch its
    partitions (an unregistered source fails there with DagsterInvalidSubsetError).

    Example: prm-pipeline register-source gsm8k
    """
    import dagster as dg

    from assets.partitions import register_sources
    from assets.resources import default_inbox
    from pipelines.inbox import sidecar_path
    from pipelines.instance import ensure_dagster_home
    from prm.tasks import BUILTIN_SOURCES, inbox_file, is_source_name

    if not is_source_name(name):
        raise click.ClickException(f"{name!r} cannot name a source: use letters, digits, '_', '-' or '.', starting "
                                   "with a letter or digit and not ending with '.' or '_'")
    home = ensure_dagster_home()
    register_sources(dg.DagsterInstance.get(), [name])
    click.echo(f"registered source {name!r} in {home}")
    if name in BUILTIN_SOURCES:
        return
    inbox = default_inbox()
    try:
        click.echo(f"its problems: {inbox_file(inbox, name)}")
    except FileNotFoundError as exc:
        click.echo(f"warning: {exc}", err=True)
    if not sidecar_path(inbox, name).is_file():
        click.echo(f"warning: no recipe at {sidecar_path(inbox, name)}; without one the run refuses to sample "
                   f"{name!r} with the default arithmetic policy (copy a recipe from recipes/ there)", err=True)


if __name__ == "__main__":
    main()
