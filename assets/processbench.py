"""ProcessBench for every registered PRM: each new version scored on people's first-error labels, the figures
written back to its registry row (``SELECT name, version, metrics_json FROM models``) and to ``prm_evaluations``."""

# No `from __future__ import annotations`: Dagster reads Config/resource annotations at definition time.
import dataclasses
from pathlib import Path

import dagster as dg
from pydantic import Field

from assets.config_base import CheckedConfig
from assets.metadata import md_table
from assets.resources import WarehouseResource
from prm.evaluation import (
    PROCESSBENCH_EXPERIMENT,
    PROCESSBENCH_SPLITS,
    evaluate_processbench_files,
    processbench_files,
    processbench_registry_metrics,
    processbench_rows,
)
from prm.models import weights_digest
from warehouse import ModelEntry, connect, model_versions, register_models, today

REGISTRY_SOURCE = "processbench"  # the registry partition of the re-registrations that carry the figures


class ProcessBenchAssetConfig(CheckedConfig):
    """Where the ProcessBench rows come from and how many PRM versions one run scores."""

    # A folder of <split>.json/.jsonl/.parquet files, or one file; None: ../shared/data/processbench when present,
    # else the 20-row slices shipped in the package (a smoke figure, not a benchmark one: the metadata says which).
    data: str | None = None
    splits: list[str] = Field(default_factory=lambda: list(PROCESSBENCH_SPLITS))
    # Rows per split, evenly spread over it (prm.evaluation.spread; the registry row records how many): 40 keeps the
    # prm job (and the demo) within seconds for a small PRM on a CPU; None scores every row, the figure to quote.
    limit: int | None = 40
    max_versions: int = 3  # newest unscored PRM versions per run: each is a model load and a pass over the rows
    rescore: bool = False  # score versions that already carry figures again


def _scorable(entry: ModelEntry) -> str | None:
    """Why ``entry``'s folder cannot be scored as that version, or None when it can."""
    folder = Path(entry.uri)
    if not folder.is_dir():
        return f"its folder {folder} is gone"
    if weights_digest(folder) != entry.version:
        return f"its folder {folder} now holds other weights (a later training run wrote there)"
    return None


@dg.asset(group_name="prm", kinds={"pytorch", "duckdb"}, deps=["prm_model"],
          description="Every newly registered PRM version on ProcessBench (people's first-error labels): official "
          "F1 per split at the fixed 0.5 threshold and at one chosen on the other split, with 95% intervals; the "
          "figures go to the version's registry row and to prm_evaluations.")
def prm_processbench(context: dg.AssetExecutionContext, config: ProcessBenchAssetConfig,
                     warehouse: WarehouseResource) -> dg.MaterializeResult:
    wh = warehouse.get()
    try:
        files, origin = processbench_files(config.data, config.splits)
    except (FileNotFoundError, ValueError) as exc:
        raise dg.Failure(description=f"no ProcessBench rows to score: {exc}") from exc
    todo, skipped = [], []
    for entry in model_versions(wh.root, "prm"):
        if not config.rescore and any(k.startswith("processbench/") for k in entry.metrics):
            continue
        why = _scorable(entry)
        (skipped.append({"version": entry.version, "name": entry.name, "why": why}) if why else todo.append(entry))
    table, entries, rows = [], [], []
    for entry in todo[: config.max_versions]:
        context.log.info(f"ProcessBench: scoring {entry.name}@{entry.version} on {sorted(files)} ({origin})")
        name = f"{entry.name}@{entry.version}"
        report = evaluate_processbench_files(entry.uri, files, limit=config.limit, model=name)
        metrics = processbench_registry_metrics(report)
        entries.append(dataclasses.replace(entry, metrics={**entry.metrics, **metrics}))
        rows += processbench_rows(report, origin)
        table += [{"version": entry.version, "name": entry.name, **r.to_json(), "f1_ci": r.f1_ci and
                   f"[{r.f1_ci[0]:.3f}, {r.f1_ci[1]:.3f}]"} for r in report.results]
    kw = {"source": REGISTRY_SOURCE, "day": today(), "run_id": context.run_id}
    if entries:
        register_models(wh, entries, writer="prm_processbench", **kw)
        wh.write("prm_evaluations", rows, writer="prm_processbench", replace=False, **kw)
    return dg.MaterializeResult(metadata={
        "dagster/row_count": len(entries),
        "data": origin,
        "scored_versions": len(entries),
        "left_for_next_run": max(0, len(todo) - config.max_versions),
        "processbench": md_table(table) if table else "_no PRM version without ProcessBench figures_",
        **({"not_scorable": md_table(skipped)} if skipped else {}),
    })


@dg.asset_check(asset=prm_processbench, blocking=True,
                description="Every PRM version this run scored has a ProcessBench F1 on every split: the rows read "
                "held both kinds (with an error, all right), else the figure would be undefined, not low.")
def processbench_figures_defined(context: dg.AssetCheckExecutionContext,
                                 warehouse: WarehouseResource) -> dg.AssetCheckResult:
    rows = connect(warehouse.get().root).execute(
        "SELECT model, split, value FROM prm_evaluations WHERE experiment = ? AND run_id = ? AND metric = ?",
        [PROCESSBENCH_EXPERIMENT, context.run.run_id, "processbench_f1"]).fetchall()
    undefined = sorted(f"{model} on {split}" for model, split, value in rows if value is None)
    return dg.AssetCheckResult(
        passed=not undefined, metadata={"figures": len(rows), "undefined": len(undefined)},
        description=(f"undefined F1 for {', '.join(undefined[:5])}: the rows read lack all-right or wrong solutions; "
                     "pass more rows (limit) or the full split (data)") if undefined
        else f"{len(rows)} F1 figures, all defined" if rows else "no PRM version was scored in this run")
