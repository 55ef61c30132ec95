"""Labeling assets: Monte-Carlo (Math-Shepherd) and OmegaPRM step labels, and their audit against truth."""

# No `from __future__ import annotations`: Dagster reads Config/resource annotations at definition time.
import dagster as dg

from assets.config_base import CheckedConfig
from assets.generation import partition_prompter
from assets.metadata import md_table
from assets.partitions import PARTITIONS, day_and_source
from assets.resources import GenerationResource, WarehouseResource
from prm.generation import SOLUTION_MAX_TOKENS
from prm.labeling import (
    MCConfig,
    OmegaPRMConfig,
    PartitionLabelReport,
    ProgressConfig,
    audit_markdown,
    audit_partition,
    label_partition,
    label_progress_partition,
    people_audit_partition,
    people_markdown,
    people_rows,
)
from warehouse import REFERENCE_METHODS, method_names

# The library's defaults, which the configs below start from.
_MC, _OMEGA, _PROGRESS = MCConfig(), OmegaPRMConfig(), ProgressConfig()


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
    if audit is not None:
        meta["audit"] = dg.MetadataValue.md(audit_markdown([audit]))
        if audit.processbench_f1 is not None:
            meta["processbench_f1"] = round(audit.processbench_f1, 3)
    return meta


class MCLabelsConfig(CheckedConfig):
    """Math-Shepherd Monte-Carlo labels: N rollouts from every step prefix."""

    n_rollouts: int = _MC.n_rollouts  # rollouts per prefix; the `rollouts` asset already paid for some of them
    early_stop: bool = _MC.early_stop  # stop at the first step whose MC is 0 (later steps labeled by convention)
    monotone: bool = _MC.monotone  # step k is good when any prefix >= k reached gold; False = per prefix
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
        MCConfig(n_rollouts=config.n_rollouts, early_stop=config.early_stop, monotone=config.monotone),
        generation.get, model=generation.model_version(),
        source=source, day=day, run_id=context.run_id, prompt=partition_prompter(context, generation.model),
        resume=config.resume, seed=config.seed, max_tokens=config.max_tokens, progress=context.log.info)
    return dg.MaterializeResult(metadata=_metadata(report))


class OmegaPRMLabelsConfig(CheckedConfig):
    """OmegaPRM binary search (Luo et al. 2024); defaults are the paper's."""

    alpha: float = _OMEGA.alpha
    beta: float = _OMEGA.beta
    length_tokens: int = _OMEGA.length_tokens  # L: rollout length normaliser, in tokens
    c_puct: float = _OMEGA.c_puct
    k: int = _OMEGA.k  # rollouts per MC estimate
    max_searches: int = _OMEGA.max_searches  # selections per question
    screen: bool = False  # the paper (and the library) drop all-right/all-wrong questions; off labels every wrong one
    resume: bool = True
    seed: int = 3
    max_tokens: int = SOLUTION_MAX_TOKENS


@dg.asset(partitions_def=PARTITIONS, group_name="labeling", kinds={"vllm", "delta"}, pool="engine",
          deps=["mc_labels"],  # after MC, so its rollouts are in the cache and not paid for twice
          description="OmegaPRM first-error labels by binary search over wrong solutions.")
def omegaprm_labels(context: dg.AssetExecutionContext, config: OmegaPRMLabelsConfig, warehouse: WarehouseResource,
                    generation: GenerationResource) -> dg.MaterializeResult:
    day, source = day_and_source(context)
    omega = OmegaPRMConfig(alpha=config.alpha, beta=config.beta, length_tokens=config.length_tokens,
                           c_puct=config.c_puct, k=config.k, max_searches=config.max_searches, screen=config.screen)
    report = label_partition(
        warehouse.get(), "omegaprm", omega, generation.get, model=generation.model_version(), source=source,
        day=day, run_id=context.run_id, prompt=partition_prompter(context, generation.model), resume=config.resume,
        seed=config.seed, max_tokens=config.max_tokens, progress=context.log.info)
    return dg.MaterializeResult(metadata=_metadata(report))


class ProgressLabelsConfig(CheckedConfig):
    """Step advantage MC(k) - MC(k-1) from the MC labels' rollouts (no new rollouts)."""

    tolerance: float = _PROGRESS.tolerance  # largest MC drop that still counts as a good step


@dg.asset(partitions_def=PARTITIONS, group_name="labeling", kinds={"delta"}, deps=["mc_labels"],
          description="Progress labels (Rewarding Progress / PAV): the change of the MC estimate at each step, "
          "from rollouts MC already paid for.")
def progress_labels(context: dg.AssetExecutionContext, config: ProgressLabelsConfig,
                    warehouse: WarehouseResource) -> dg.MaterializeResult:
    day, source = day_and_source(context)
    wh = warehouse.get()
    labels = label_progress_partition(wh, ProgressConfig(tolerance=config.tolerance), source=source, day=day,
                                      run_id=context.run_id)
    good = sum(lb.hard_label is True for lb in labels)
    meta = {"dagster/row_count": len(labels), "good_steps": good, "bad_steps": sum(lb.hard_label is False
                                                                                   for lb in labels)}
    audit = audit_partition(wh, "progress", source, day)
    if audit is not None:
        meta["audit"] = dg.MetadataValue.md(audit_markdown([audit]))
    return dg.MaterializeResult(metadata=meta)


@dg.asset(partitions_def=PARTITIONS, group_name="labeling", kinds={"duckdb", "delta"},
          deps=["mc_labels", "omegaprm_labels", "progress_labels", "formal_verifications", "judgments",
                "consensus_labels"],
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
    return dg.MaterializeResult(metadata={"dagster/row_count": len(rows) or len(people),
                                          "truth": "people" if people else "exact" if rows else "none",
                                          "audit": dg.MetadataValue.md(table)})
