"""Labeling assets: Monte-Carlo (Math-Shepherd) and OmegaPRM step labels, their audit against truth, and one
asset ``<name>_labels`` made from the labeler registry for every method whose table row names no hand-written
asset (docs/how-to/add-label-method.md)."""

# No `from __future__ import annotations`: Dagster reads Config/resource annotations at definition time.
import dataclasses
from collections.abc import Collection

import dagster as dg

from assets.config_base import Mirror, derive
from assets.generation import partition_prompter
from assets.metadata import md_table
from assets.partitions import PARTITIONS, day_and_source
from assets.resources import GenerationResource, WarehouseResource
from prm.generation import SOLUTION_MAX_TOKENS
from prm.label_audit import audit_markdown, people_markdown, people_rows
from prm.labeling import (
    LABELERS,
    MCConfig,
    OmegaPRMConfig,
    PartitionLabelReport,
    ProgressConfig,
    audit_partition,
    get_labeler,
    label_method_partition,
    label_partition,
    label_progress_partition,
    people_audit_partition,
)
from warehouse.methods import REFERENCE_METHODS, label_assets, method, method_names


def _metadata(report: PartitionLabelReport) -> dict:
    audit = report.audit
    meta = {
        "dagster/row_count": report.labels,
        "labeled_solutions": report.labeled_solutions,
        "skipped_already_labeled": report.skipped_solutions,
        "new_rollouts": report.new_rollouts,
        "cost_rollouts": report.cost_rollouts,
        "cost_tokens": report.cost_tokens,
        "label_balance": md_table([{"hard label": k, "steps": v} for k, v in sorted(report.label_balance.items())]),
    }
    if report.budget_stopped:  # the rollout budget left solutions unlabeled: say so where the run is read
        meta["budget_stopped"] = report.budget_stopped
    if report.plan_note:  # what active's uncertainty estimate rested on (its calibration, or why none)
        meta["plan"] = report.plan_note
    if audit is not None:
        meta["audit"] = dg.MetadataValue.md(audit_markdown([audit]))
        if audit.processbench_f1 is not None:
            meta["processbench_f1"] = round(audit.processbench_f1, 3)
    return meta


class MCLabelsConfig(derive(Mirror(MCConfig))):
    """Math-Shepherd Monte-Carlo labels: N rollouts from every step prefix (prm.labeling.MCConfig's fields; the
    `rollouts` asset already paid for some of them)."""

    resume: bool = True  # skip solutions already labeled by this method (a killed run continues)
    seed: int = 2
    max_tokens: int = SOLUTION_MAX_TOKENS


@dg.asset(partitions_def=PARTITIONS, group_name="labeling", kinds={"vllm", "delta"}, pool="engine",
          deps=["rollouts"], description="Monte-Carlo step labels: soft = share of rollouts reaching gold.")
def mc_labels(context: dg.AssetExecutionContext, config: MCLabelsConfig, warehouse: WarehouseResource,
              generation: GenerationResource) -> dg.MaterializeResult:
    day, source = day_and_source(context)
    report = label_partition(
        warehouse.get(), "mc_early_stop" if config.early_stop else "mc",
        config.to_library(),
        generation.get, model=generation.model_version(),
        source=source, day=day, run_id=context.run_id, prompt=partition_prompter(context, generation.model),
        resume=config.resume, seed=config.seed, max_tokens=config.max_tokens, progress=context.log.info)
    return dg.MaterializeResult(metadata=_metadata(report))


class OmegaPRMLabelsConfig(derive(Mirror(
        OmegaPRMConfig,
        # The paper (and the library) drop all-right/all-wrong questions; off labels every wrong one.
        defaults={"screen": False},
))):
    """OmegaPRM binary search (Luo et al. 2024): prm.labeling.OmegaPRMConfig's fields, whose defaults are the
    paper's."""

    resume: bool = True
    seed: int = 3
    max_tokens: int = SOLUTION_MAX_TOKENS


@dg.asset(partitions_def=PARTITIONS, group_name="labeling", kinds={"vllm", "delta"}, pool="engine",
          deps=["mc_labels"],  # after MC, so its rollouts are in the cache and not paid for twice
          description="OmegaPRM first-error labels by binary search over wrong solutions.")
def omegaprm_labels(context: dg.AssetExecutionContext, config: OmegaPRMLabelsConfig, warehouse: WarehouseResource,
                    generation: GenerationResource) -> dg.MaterializeResult:
    day, source = day_and_source(context)
    omega = config.to_library()
    report = label_partition(
        warehouse.get(), "omegaprm", omega, generation.get, model=generation.model_version(), source=source,
        day=day, run_id=context.run_id, prompt=partition_prompter(context, generation.model), resume=config.resume,
        seed=config.seed, max_tokens=config.max_tokens, progress=context.log.info)
    return dg.MaterializeResult(metadata=_metadata(report))


class ProgressLabelsConfig(derive(Mirror(ProgressConfig))):
    """Step advantage MC(k) - MC(k-1) from the MC labels' rollouts, no new rollouts (prm.labeling.ProgressConfig's
    fields)."""


@dg.asset(partitions_def=PARTITIONS, group_name="labeling", kinds={"delta"}, deps=["mc_labels"],
          description="Progress labels (Rewarding Progress / PAV): the change of the MC estimate at each step, "
          "from rollouts MC already paid for.")
def progress_labels(context: dg.AssetExecutionContext, config: ProgressLabelsConfig,
                    warehouse: WarehouseResource) -> dg.MaterializeResult:
    day, source = day_and_source(context)
    wh = warehouse.get()
    labels = label_progress_partition(wh, config.to_library(), source=source, day=day,
                                      run_id=context.run_id)
    good = sum(lb.hard_label is True for lb in labels)
    meta = {"dagster/row_count": len(labels), "good_steps": good, "bad_steps": sum(lb.hard_label is False
                                                                                   for lb in labels)}
    audit = audit_partition(wh, "progress", source, day)
    if audit is not None:
        meta["audit"] = dg.MetadataValue.md(audit_markdown([audit]))
    return dg.MaterializeResult(metadata=meta)


@dg.asset(partitions_def=PARTITIONS, group_name="labeling", kinds={"duckdb", "delta"},
          deps=list(label_assets()),  # every asset that writes step labels (the method table's)
          description="Each labeling method vs exact truth (generated tasks) or people's first-error labels "
          "(imported solutions): ProcessBench F1 with its interval, step F1 or precision/recall, cost.")
def label_audit(context: dg.AssetExecutionContext, warehouse: WarehouseResource) -> dg.MaterializeResult:
    day, source = day_and_source(context)
    wh = warehouse.get()
    present = {r["method"] for r in wh.read_partition("step_labels", source, day).to_pylist()}
    rows = [a for m in method_names() if m in present if (a := audit_partition(wh, m, source, day)) is not None]
    people = people_audit_partition(wh, [m for m in method_names() if m in present], source, day,
                                    uses_reference=REFERENCE_METHODS)
    kw = {"source": source, "day": day, "run_id": context.run_id, "replace": True}
    if people:  # imported solutions: their first errors are people's, so the audit is against people
        wh.write("prm_evaluations", [r for a in people for r in people_rows(a)], writer="label_audit_people", **kw)
        rows = []
    wh.write("label_audit", [r.to_row() for r in rows], writer="label_audit", **kw)
    table = audit_markdown(rows) if rows else "_no exact truth in this partition (not a generated task)_"
    if people:
        table = people_markdown(people)
    context.log.info("label audit\n" + table)
    # Quality per rollout beside rollouts per step, for the methods that used rollouts.
    per_rollout = {a.method: {"rollouts_per_step": a.rollouts_per_step, "agreed_per_1k_rollouts":
                              a.agreed_per_1k_rollouts} for a in rows if a.agreed_per_1k_rollouts is not None}
    per_rollout |= {a.method: {"rollouts_per_solution": a.rollouts_per_solution, "agreed_per_1k_rollouts":
                               a.agreed_per_1k_rollouts} for a in people if a.agreed_per_1k_rollouts is not None}
    return dg.MaterializeResult(metadata={"dagster/row_count": len(rows) or len(people),
                                          "truth": "people" if people else "exact" if rows else "none",
                                          "audit": dg.MetadataValue.md(table),
                                          "quality_per_rollout": dg.MetadataValue.json(per_rollout)})


# The asset that writes each table a derived labeler may read (its ``reads``): a made asset runs after them.
TABLE_WRITERS: dict[str, tuple[str, ...]] = {
    "problems": ("problems",), "solutions": ("solutions",), "steps": ("solutions",), "rollouts": ("rollouts",),
    "verifications": ("formal_verifications",), "judgments": ("judgments",),
    # the hand-written label assets but consensus, which runs after the made ones (it combines every method)
    "step_labels": tuple(a for a, names in label_assets().items()
                         if not any(method(m).generated or method(m).kind == "consensus" for m in names)),
}


def method_config(name: str) -> type:
    """The launchpad config of a made asset: the registered labeler's config dataclass, derived field by field
    (:func:`assets.config_base.derive`), its defaults those of the registered default config, so a knob added to the
    labeler's config reaches the launchpad without code here."""
    spec = LABELERS[name]
    base = spec.config_type()
    defaults = {f.name: getattr(spec.default, f.name) for f in dataclasses.fields(spec.config_type)
                if getattr(spec.default, f.name) != getattr(base, f.name)}
    fields = derive(Mirror(spec.config_type, defaults=defaults))
    return type(f"{spec.config_type.__name__}Launchpad", (fields,), {"__module__": __name__,
                                                                    "__doc__": f"The {name!r} labeler's config."})


def method_asset(name: str) -> dg.AssetsDefinition:
    """The asset ``<name>_labels`` of a registered method whose table row names no hand-written asset: it runs the
    labeler with the launchpad's config (:func:`method_config`) through ``label_method_partition`` (the path its
    ``needs`` names) and reports what :func:`_metadata` reports for MC."""
    spec, key = LABELERS[name], method(name).asset_key
    if spec.needs == "rows":
        reads = get_labeler(name).reads
        unknown = sorted(set(reads) - set(TABLE_WRITERS))
        if unknown:
            raise ValueError(f"label method {name!r} reads {unknown}, which no asset assets/labeling.py knows writes; "
                             f"read from {sorted(TABLE_WRITERS)}")
        deps = list(dict.fromkeys(a for table in reads for a in TABLE_WRITERS[table]))
    else:
        deps = ["rollouts"] if spec.needs == "rollouts" else ["solutions"]
    engine = spec.needs != "rows"
    resources = {"warehouse", *(("generation",) if engine else ()), *(("judge",) if spec.needs == "backend" else ())}
    config_type = method_config(name)
    kinds = {"delta", *(("vllm",) if engine else ())}

    @dg.asset(name=key, partitions_def=PARTITIONS, group_name="labeling", kinds=kinds,
              pool="engine" if engine else None, deps=deps, required_resource_keys=resources,
              description=f"{method(name).display}: step labels of the registered {name!r} labeler (its config's "
              "fields in the launchpad, the registered defaults).")
    def made_asset(context: dg.AssetExecutionContext, config: config_type) -> dg.MaterializeResult:
        day, source = day_and_source(context)
        res = context.resources
        kw = {}
        if engine:  # the policy's rollouts, or the judge resource for a method that reads whole solutions
            kw = {"backend": (res.judge if spec.needs == "backend" else res.generation).get,
                  "model": res.generation.model_version(), "prompt": partition_prompter(context, res.generation.model)}
        report = label_method_partition(res.warehouse.get(), name, config.to_library(), source=source, day=day,
                                        run_id=context.run_id, progress=context.log.info, **kw)
        return dg.MaterializeResult(metadata=_metadata(report))

    return made_asset


def method_assets() -> tuple[dg.AssetsDefinition, ...]:
    """One made asset per computed method whose method-table row names no hand-written asset, in table order."""
    return tuple(method_asset(n) for n in method_names() if method(n).generated)


def as_module_attributes(made: tuple[dg.AssetsDefinition, ...], taken: Collection[str]) -> dict:
    """``made`` by attribute name (its key), refusing a name the module already uses."""
    names = {a.key.to_python_identifier(): a for a in made}
    clash = sorted(set(names) & set(taken))
    if clash:
        raise RuntimeError(f"made assets {clash} would shadow names of assets/labeling.py; rename the label method")
    return names


METHOD_ASSETS = method_assets()
# Module attributes, where Dagster's loaders and pipelines.definitions find assets (a tuple is not searched).
globals().update(as_module_attributes(METHOD_ASSETS, globals()))
