"""The problems asset: one (day, source) partition of generated or dropped-in problems."""

# No `from __future__ import annotations`: Dagster reads Config/resource annotations at definition time.
import dagster as dg

from assets.config_base import Mirror, derive
from assets.metadata import histogram, md_table
from assets.partitions import PARTITIONS, day_and_source
from assets.resources import WarehouseResource
from prm.datagen import read_intake, store_new_problems
from prm.tasks import ArithmeticSourceConfig, inbox_file, load_source


class ProblemsConfig(derive(Mirror(ArithmeticSourceConfig))):
    """Knobs of the built-in ``arith`` (prm.tasks.ArithmeticSourceConfig's fields: per_level problems per (n_ops,
    style) and day) and ``logic`` sources (file sources ignore all but ``limit``)."""

    seed: int = 0  # combined with the day: each nightly partition draws fresh problems
    logic_problems: int = 16  # problems of the built-in ``logic`` source per day
    limit: int | None = None  # cap on rows read from a dropped-in file
    # "solutions": the dropped-in file holds solutions someone already has (ProcessBench, TRL stepwise, Math-Shepherd
    # or plain rows: prm.tasks.load_solutions); their questions become the problems and the `solutions` asset
    # stores the file's solutions instead of sampling. A sidecar recipe's `dataset.kind: solutions` sets it.
    kind: str = "problems"
    reference: str | None = None  # kind solutions: a GSM8K/MATH-style file whose gold answers the questions get
    task: str | None = None  # kind solutions: the problems' task ("math" or "gsm8k"); None: math


@dg.asset(
    partitions_def=PARTITIONS,
    group_name="problems",
    kinds={"python", "delta"},
    description="Problems of one (day, source): the seeded arithmetic or logic generator, or a file dropped in "
    "the inbox.",
)
def problems(context: dg.AssetExecutionContext, config: ProblemsConfig, warehouse: WarehouseResource):
    day, source = day_and_source(context)
    if config.kind == "solutions":
        return _imported_problems(context, config, warehouse, source, day)
    if config.kind != "problems":
        raise dg.Failure(f"problems config kind {config.kind!r} is unknown; use 'problems' or 'solutions'")
    try:
        loaded = load_source(source, day, arith=config.to_library(), seed=config.seed,
                             inbox=warehouse.inbox_path(), limit=config.limit,
                             logic_problems=config.logic_problems)
    except (FileNotFoundError, ValueError) as exc:
        raise dg.Failure(description=f"cannot load problems of source {source!r} for {day}: {exc}") from exc
    records = loaded.records
    if loaded.rejected:
        context.log.warning(f"{len(loaded.rejected)} rows rejected, first: " + "; ".join(map(str, loaded.rejected[:5])))
    fresh, result = store_new_problems(warehouse.get(), records, source=source, day=day, run_id=context.run_id)
    if not records:
        outcome = f"no problems: source {source} yielded none for {day}"
    elif result.path is None:  # a normal nightly result, e.g. day 2 of a dropped-in file: nothing is new
        outcome = f"no new problems: all {len(records)} of {source} were stored by earlier partitions"
    else:
        outcome = f"wrote {result.rows} new problems to {result.path}"
    context.log.info(f"{source} {day}: {outcome}")
    preview = [{"problem_id": r.problem_id, "task": r.task, "steps": r.n_gold_steps, "question": r.question,
                "gold": r.gold_answer} for r in fresh[:8]]
    return dg.MaterializeResult(metadata={
        "dagster/row_count": result.rows,
        "skipped_existing": len(records) - len(fresh),
        "outcome": outcome,
        **({"path": dg.MetadataValue.path(str(result.path))} if result.path is not None else {}),
        "tasks": histogram([r.task for r in fresh], "task"),
        "gold_steps": histogram([r.n_gold_steps for r in fresh], "gold steps"),
        "preview": md_table(preview),
        # Rows of a dropped-in file left out (no question, no extractable gold answer) and repeated questions.
        "rejected_rows": len(loaded.rejected),
        "duplicate_rows": len(loaded.duplicates),
        "rejected": md_table([{"file": r.file, "line": r.line, "reason": r.reason}
                              for r in (*loaded.rejected, *loaded.duplicates)[:20]], whole=["file"]),
    })


def _imported_problems(context: dg.AssetExecutionContext, config: ProblemsConfig, warehouse: WarehouseResource,
                       source: str, day: str) -> dg.MaterializeResult:
    """The questions of a solution file as problems, with the reference's gold answers where it has them."""
    try:
        intake = read_intake(inbox_file(warehouse.inbox_path(), source), source=source, reference=config.reference,
                             task=config.task, limit=config.limit)
    except (FileNotFoundError, ValueError) as exc:
        raise dg.Failure(description=f"cannot read the solutions of source {source!r} for {day}: {exc}") from exc
    records = list(intake.problems)
    fresh, result = store_new_problems(warehouse.get(), records, source=source, day=day, run_id=context.run_id)
    loaded = intake.loaded
    context.log.info(f"{source} {day}: {loaded.summary()}; {len(fresh)} new problems")
    with_gold = sum(bool(r.gold_answer) for r in records)
    return dg.MaterializeResult(metadata={
        "dagster/row_count": result.rows,
        "skipped_existing": len(records) - len(fresh),
        "outcome": f"{len(loaded.records)} solutions of {len(records)} problems ({loaded.format} file); "
                   f"{with_gold} problems with a gold answer",
        "solution_format": loaded.format,
        "reference_matched": intake.n_reference_matched,
        "problems_with_gold": with_gold,
        "preview": md_table([{"problem_id": r.problem_id, "question": r.question, "gold": r.gold_answer}
                             for r in fresh[:8]]),
        "rejected_rows": len(loaded.set_aside),
        "rejected": md_table([{"file": r.file, "line": r.line, "reason": r.reason} for r in loaded.set_aside[:20]],
                             whole=["file"]),
    })
