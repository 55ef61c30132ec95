"""``prm-pipeline``: run a recipe end to end, or register a source for Dagster's dynamic partitions.

Example::

    prm-pipeline run recipes/smollm2-gsm8k.yaml --set sampling.n=2 --dry-run
    prm-pipeline run recipes/smollm2-gsm8k.yaml
    prm-pipeline register-source gsm8k
    prm-pipeline eval processbench --prm arith-prm --split gsm8k math --out preds.jsonl

Data, Dagster home and inbox follow ``PRM_DATA_ROOT``, ``DAGSTER_HOME`` and ``PRM_INBOX`` (docs/recipes.md).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import click

from pipelines.recipe import Recipe, RecipeError, load_recipe
from prm.models import ARITH_PRM_NAME


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
        from pipelines.recipe_models import model_report

        problems = model_report(recipe)[1]  # a misspelled model fails now, not after sampling
        if problems:
            raise RecipeError.collected(f"recipe {recipe.name!r}", problems)
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

    from pipelines.recipe_models import model_report
    from pipelines.run_config import recipe_run_config, recipe_selection

    models, problems = model_report(recipe)
    lines = [f"recipe {recipe.name!r} is valid; day {day}, source {recipe.source!r}", *models]
    try:
        dataset = _dataset_line(recipe)
    except (RecipeError, OSError, ValueError) as exc:
        problems.append(" ".join(str(exc).split()).removeprefix(f"recipe {recipe.name!r}: "))
    else:
        lines.extend([dataset] if dataset else [])
    if problems:  # every problem at once: one edit of the recipe fixes them all
        raise RecipeError.collected(f"recipe {recipe.name!r}", problems)
    for job in ("refresh", "prm", *(("rl",) if recipe.rl.run else ())):
        selection = recipe_selection(recipe, job)
        lines.append(f"\n{job} run config" + (f" (assets {selection})" if selection else "") + ":")
        lines.append(json.dumps(recipe_run_config(recipe, job), indent=1))
    return "\n".join(lines)


def _dataset_line(recipe: Recipe) -> str | None:
    """The dataset's usable rows as a dry run reads them (None: a built-in generator); raises what is wrong."""
    import tempfile

    from pipelines.inbox import stage_dataset
    from prm.datagen import read_intake
    from prm.tasks import load_problems

    if not recipe.dataset.reads_file():
        return None
    try:
        recipe.dataset.file()  # a hub dataset is loaded here, once: offline with no cached copy, one line
    except ValueError as exc:
        raise RecipeError(str(exc)) from None
    if recipe.dataset.kind == "solutions":
        try:
            intake = read_intake(recipe.dataset.file(), source=recipe.source, reference=recipe.dataset.reference_file(),
                                 task=recipe.dataset.task, limit=recipe.dataset.limit)
        except (OSError, ValueError) as exc:
            raise RecipeError(f"dataset {recipe.dataset.file()}: {exc}") from None
        gold = sum(bool(p.gold_answer) for p in intake.problems)
        return (f"dataset        {intake.loaded.summary()}; {gold} of {len(intake.problems)} problems with a gold "
                "answer")
    with tempfile.TemporaryDirectory() as scratch:
        staged = stage_dataset(recipe, Path(scratch))
        try:
            loaded = load_problems(staged, source=recipe.source, limit=recipe.dataset.limit)
        except (OSError, ValueError) as exc:
            raise RecipeError(f"dataset {recipe.dataset.file()}: {exc}") from None
    return (f"dataset        {recipe.dataset.file()}: {len(loaded.records)} problems with a gold answer, "
            f"{len(loaded.rejected)} rows rejected, {len(loaded.duplicates)} repeated")


@main.command("register-source")
@click.argument("name")
def register_source(name: str) -> None:
    """Add NAME to the dynamic source partitions, so `dg launch` and the UI can launch its partitions (an
    unregistered source's partition fails there with DagsterUnknownPartitionError).

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


# --- prm-pipeline eval -----------------------------------------------------------------------------------------------



@main.group("eval")
def eval_group() -> None:
    """Evaluate a PRM or a critic on an external step-labelled benchmark.

    Example: prm-pipeline eval processbench --prm arith-prm --data prm/evaluation/slices
    """


@eval_group.command("processbench")
@click.option("--prm", "prm_name", metavar="FOLDER|NAME|HUB_ID",
              help=f"the PRM: a PRM folder, {ARITH_PRM_NAME!r} (the shipped PRM) or a hub id such as "
                   "Qwen/Qwen2.5-Math-PRM-7B (fetched into the Hugging Face cache)")
@click.option("--judge", metavar="NAME|FOLDER|HUB_ID",
              help="a chat model as critic instead: a registered name (smollm2-judge, smollm2-135m-instruct), a "
                   "folder or a hub id; its tokenizer gives the chat template")
@click.option("--base-url", metavar="URL", help="with --judge: an OpenAI-compatible server (http://host:8000/v1) "
              "serving the judge, instead of a local vLLM engine")
@click.option("--split", "splits", multiple=True, metavar="NAME",
              help="splits to evaluate, repeatable or listed after it (--split gsm8k math); default: gsm8k math "
                   "(a --data file: its own name)")
@click.argument("more_splits", nargs=-1, metavar="")
@click.option("--data", type=click.Path(path_type=Path), metavar="PATH",
              help="a ProcessBench file (JSON array, JSONL or Parquet), or a folder holding <split>.json, .jsonl or "
                   ".parquet; default: ../shared/data/processbench beside the checkout, when present")
@click.option("--limit", type=click.IntRange(min=1), metavar="N", help="evaluate N rows of each split, evenly "
              "spaced through the file (ProcessBench lists the error rows first)")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), metavar="PREDS.jsonl",
              help='write {"id", "split", "label", "predicted"} per row (the fixed threshold; a critic\'s own)')
@click.option("--max-tokens", type=click.IntRange(min=1), default=8192, show_default=True,
              help="critic: tokens per critique (run_eval.py's budget; the shipped judge was trained at 512)")
@click.option("--convention", metavar="NAME", help="PRM: the step-tag convention of a folder without "
              "prm_convention.json (prm-pipeline, qwen2.5-math-prm, math-shepherd)")
@click.option("--trust-remote-code", is_flag=True,
              help="PRM: load a head kept as code in the folder (Qwen2.5-Math-PRM); read that code first")
@click.option("--engine", type=click.Choice(["transformers", "vllm"]), default="transformers", show_default=True,
              help="PRM: run it in this process (transformers) or in vLLM's pooling runner")
@click.option("--batch-size", type=click.IntRange(min=1), help="PRM: solutions per forward pass")
@click.option("--dry-run", is_flag=True, help="read the data and resolve the model without loading (or "
              "downloading) it; print the plan as JSON")
def processbench(prm_name: str | None, judge: str | None, base_url: str | None, splits: tuple[str, ...],
                 more_splits: tuple[str, ...], data: Path | None, limit: int | None, out: Path | None,
                 max_tokens: int, convention: str | None, trust_remote_code: bool, engine: str,
                 batch_size: int | None, dry_run: bool) -> None:
    """Score a PRM (first step below the threshold) or a critic (the index in its last \\boxed{}) against
    ProcessBench's human labels with the official metric (QwenLM/ProcessBench code/run_eval.py).

    Prints one row per split and threshold rule (the fixed 0.5, and one chosen on the other split), then one JSON
    line: {"splits": [{"split", "rows", "error_acc", "correct_acc", "f1", "f1_ci", "threshold",
    "threshold_from"}], "prm": ...} (figures as fractions; f1_ci a 95% interval over problems).

    Example: prm-pipeline eval processbench --prm Qwen/Qwen2.5-Math-PRM-7B --convention qwen2.5-math-prm
    --trust-remote-code --split gsm8k math
    """
    if (prm_name is None) == (judge is None):
        raise click.UsageError("pass exactly one of --prm (a PRM) and --judge (a critic)")
    if base_url is not None and judge is None:
        raise click.UsageError("--base-url serves a critic: pass it with --judge")
    names = list(dict.fromkeys((*splits, *more_splits)))
    from prm.evaluation import SHARED_PROCESSBENCH, SLICES, processbench_files

    try:
        if data is None and not SHARED_PROCESSBENCH.is_dir():
            raise FileNotFoundError(f"no --data given and no {SHARED_PROCESSBENCH}; pass --data with a ProcessBench "
                                    "file or a folder holding <split>.json, .jsonl or .parquet (Qwen/ProcessBench's "
                                    f"splits), or --data {SLICES} for the 20-row slices the package ships")
        files, _ = processbench_files(data, names)
        if dry_run:
            click.echo(json.dumps(processbench_plan(prm_name or judge, files, limit, critic=judge is not None,
                                                    base_url=base_url)))
            return
        from prm.evaluation import evaluate_processbench_files, load_split

        started = time.perf_counter()
        rows = {name: load_split(name, path, limit=limit) for name, path in files.items()}  # before any model loads
        if judge is not None:
            critic, close = _critic(judge, base_url, max_tokens)
            try:
                report = evaluate_processbench_files(critic, rows)
            finally:
                close()
        else:
            scorer, label = _prm_scorer(prm_name, convention, trust_remote_code, engine, batch_size)
            try:
                report = evaluate_processbench_files(scorer, rows, model=label)
            finally:
                scorer.close()
    except (FileNotFoundError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    for note in report.notes:
        click.echo(f"note: {note}", err=True)
    for result in report.results:
        click.echo(result.line())
    if out is not None:
        report.write_predictions(out)
        click.echo(f"wrote {len(report.predictions)} predictions to {out}", err=True)
    click.echo(f"{report.model}: {time.perf_counter() - started:.1f}s", err=True)
    click.echo(report.json_line())


def processbench_plan(model: str, files: dict[str, Path], limit: int | None, *, critic: bool,
                      base_url: str | None) -> dict[str, object]:
    """What a dry run prints: the model as it resolves (nothing loaded or downloaded) and each split's rows."""
    from prm.evaluation import load_split
    from prm.models import REGISTERED_MODELS, resolve_model

    if not critic and model == ARITH_PRM_NAME and not Path(model).exists():
        from prm.training import SHIPPED_PRM_DIR

        where = f"the shipped PRM {SHIPPED_PRM_DIR}"
    elif base_url is not None:
        where = f"served at {base_url} (its tokenizer from {model!r})"
    elif model in REGISTERED_MODELS:
        where = f"the registered model {model!r}: built into the model cache on first use"
    else:
        resolved = resolve_model(model)
        where = (f"the local folder {resolved}" if isinstance(resolved, Path) else f"hub id {resolved!r}: not "
                 "downloaded by a dry run (needs the hub, or the model in the local Hugging Face cache)")
    splits = {name: {"path": str(path), "rows": len(load_split(name, path, limit=limit).labels)}
              for name, path in files.items()}
    return {"dry_run": True, "mode": "critic" if critic else "prm", "model": model, "resolves_to": where,
            "splits": splits}


def _prm_scorer(name: str, convention: str | None, trust_remote_code: bool, engine: str,
                batch_size: int | None) -> tuple[object, str]:
    """The loaded PRM and its label for the report (``name@<weights digest>`` for a folder, a hub id as given)."""
    from prm.models import local_model, model_version, resolve_model, weights_digest
    from prm.scoring import ScorerConfig, load_prm

    config = ScorerConfig(engine=engine, batch_size=batch_size, trust_remote_code=trust_remote_code)
    if name == ARITH_PRM_NAME and not Path(name).exists():
        from prm.training import SHIPPED_PRM_DIR, verify_shipped_prm

        verify_shipped_prm(SHIPPED_PRM_DIR)
        folder, label = SHIPPED_PRM_DIR, f"{name}@{weights_digest(SHIPPED_PRM_DIR)}"
    else:
        folder = local_model(name)
        label = model_version(name) if isinstance(resolve_model(name), Path) else name  # a hub id as given
    try:
        return load_prm(folder, config, convention=convention), label
    except FileNotFoundError as exc:
        raise FileNotFoundError(f"{exc} (or pass --convention NAME for a downloaded PRM, e.g. --convention "
                                "qwen2.5-math-prm --trust-remote-code for Qwen2.5-Math-PRM)") from None


def _critic(judge: str, base_url: str | None, max_tokens: int) -> tuple[object, object]:
    """A :class:`prm.evaluation.GenerationCritic` over a local vLLM engine or a server, and the
    backend's ``close``."""
    from prm.evaluation import GenerationCritic
    from prm.generation import GenerationConfig, make_backend
    from prm.models import load_tokenizer, model_version

    if base_url is not None:
        backend = make_backend(GenerationConfig(backend="openai", model=judge, base_url=base_url))
        label = f"{judge} via {base_url}"
    else:
        backend = make_backend(GenerationConfig(backend="vllm", model=judge, max_model_len=None))
        label = model_version(judge)
    try:
        critic = GenerationCritic(backend, load_tokenizer(judge), name=label, max_tokens=max_tokens)
    except BaseException:
        backend.close()
        raise
    return critic, backend.close


if __name__ == "__main__":
    main()
