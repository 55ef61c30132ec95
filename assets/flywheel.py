"""The flywheel: one partition per round. The round's policy is sampled and rolls out the labels, the PRM
retrains warm-started on the window's labels, and RL resumes from the last policy with it (prm.flywheel)."""

# No `from __future__ import annotations`: Dagster reads Config/resource annotations at definition time.
from dataclasses import replace
from pathlib import Path

import dagster as dg

from assets.metadata import md_table
from assets.partitions import ROUNDS, round_key
from assets.resources import FlywheelResource, GenerationResource, WarehouseResource
from prm.flywheel import (
    LazyBackend,
    hacking_in_band,
    label_round,
    plot_rounds,
    policy_holds,
    policy_name,
    policy_stage,
    prm_name,
    prm_no_worse,
    prm_stage,
    registered_rounds,
    rollouts_paid,
    round_dir,
    round_policy,
    round_source,
    rounds_markdown,
    samples_stage,
)
from prm.label_audit import audit_markdown
from warehouse import latest_model

GROUP = "flywheel"


def _policy(context: dg.AssetExecutionContext, warehouse: WarehouseResource,
            flywheel: FlywheelResource) -> tuple[int, Path]:
    k = round_key(context)
    try:
        return k, round_policy(warehouse.get().root, k, flywheel.get())
    except LookupError as exc:
        raise dg.Failure(str(exc)) from exc


def _backend(generation: GenerationResource, flywheel: FlywheelResource, policy: Path) -> LazyBackend:
    """The run's engine on the round's policy, with the generation resource's engine settings."""
    if generation.backend != "vllm":
        raise dg.Failure(f"the flywheel samples its own RL checkpoints, so it needs the local vllm backend, not "
                         f"{generation.backend!r} (a server serves one fixed model); set generation.backend: vllm")
    return flywheel.engine(replace(generation.config(), model=str(policy)))


@dg.asset(partitions_def=ROUNDS, group_name=GROUP, kinds={"vllm", "delta"}, pool="engine",
          description="A round's fresh problems and n samples of each from the round's policy: the last round's "
                      "RL checkpoint, or the shipped policy in round 0.")
def flywheel_samples(context: dg.AssetExecutionContext, warehouse: WarehouseResource,
                     generation: GenerationResource, flywheel: FlywheelResource) -> dg.MaterializeResult:
    k, policy = _policy(context, warehouse, flywheel)
    wh, cfg = warehouse.get(), flywheel.get()
    problems, samples = samples_stage(wh, k, cfg, _backend(generation, flywheel, policy), policy,
                                      run_id=context.run_id)
    context.log.info(f"round {k}: {samples.stats.n_solutions} samples from {samples.policy}")
    return dg.MaterializeResult(metadata={
        "round": k, "source": round_source(k), "policy": samples.policy, "problems": problems,
        "dagster/row_count": samples.stats.n_solutions, "accuracy": round(samples.stats.accuracy, 3),
        "reused": samples.reused_from_run is not None,
    })


@dg.asset(partitions_def=ROUNDS, group_name=GROUP, kinds={"vllm", "delta"}, pool="engine",
          deps=[flywheel_samples], description="Step labels of the round's samples, rolled out from the same "
          "policy that wrote them (labels are relative to the policy that rolls out).")
def flywheel_labels(context: dg.AssetExecutionContext, warehouse: WarehouseResource,
                    generation: GenerationResource, flywheel: FlywheelResource) -> dg.MaterializeResult:
    k, policy = _policy(context, warehouse, flywheel)
    wh, cfg = warehouse.get(), flywheel.get()
    report = label_round(wh, k, cfg, policy, _backend(generation, flywheel, policy), run_id=context.run_id,
                         progress=context.log.info)
    flywheel.close_engine()  # the PRM and RL steps that follow need the memory and the cores
    meta = {"round": k, "method": cfg.label_method, "dagster/row_count": report.labels,
            "labeled_solutions": report.labeled_solutions, "skipped_already_labeled": report.skipped_solutions,
            "rollouts_paid": rollouts_paid(wh.root, k)}
    if report.audit is not None:
        meta["audit"] = dg.MetadataValue.md(audit_markdown([report.audit]))
    return dg.MaterializeResult(metadata=meta)


@dg.asset(partitions_def=ROUNDS, group_name=GROUP, kinds={"pytorch", "delta"}, pool="engine",
          deps=[flywheel_labels], description="The round's PRM, warm-started from the last one on the window's "
          "labels, registered in the models table; ProcessBench F1 on the round's held-out samples next to the "
          "last round's PRM and round 0's left stale.")
def flywheel_prm(context: dg.AssetExecutionContext, warehouse: WarehouseResource,
                 flywheel: FlywheelResource) -> dg.MaterializeResult:
    k = round_key(context)
    wh = warehouse.get()
    try:
        entry, f1 = prm_stage(wh, k, flywheel.get(), flywheel.models(), run_id=context.run_id)
    except (LookupError, ValueError) as exc:
        raise dg.Failure(f"round {k}: {exc}") from exc
    table = [{"PRM": name, "F1 on this round's held-out samples": value} for name, value in f1.f1.items()]
    return dg.MaterializeResult(metadata={
        "round": k, "version": entry.version, "parent_version": entry.parent_version or "",
        "status": entry.status, "status_note": entry.status_note,
        "path": dg.MetadataValue.path(entry.uri), "f1": md_table(table), "n_test": f1.n_test,
        "training_tables": md_table([{"table": t, "version": v} for t, v in entry.training_tables.items()]),
        **entry.metrics,
    })


@dg.asset(partitions_def=ROUNDS, group_name=GROUP, kinds={"pytorch", "delta"}, pool="rl", deps=[flywheel_prm],
          description="GRPO resumed from the round's policy with the round's PRM; the checkpoint is registered "
          "and the next round samples it. Held-out accuracy (the same problems every round) and hacking signals.")
def flywheel_policy(context: dg.AssetExecutionContext, warehouse: WarehouseResource,
                    flywheel: FlywheelResource) -> dg.MaterializeResult:
    k = round_key(context)
    wh = warehouse.get()
    try:
        entry, result = policy_stage(wh, k, flywheel.get(), flywheel.models(), run_id=context.run_id,
                                     progress=context.log.info)
    except LookupError as exc:
        raise dg.Failure(f"round {k}: {exc}") from exc
    rounds = registered_rounds(wh.root)
    return dg.MaterializeResult(metadata={
        "round": k, "version": entry.version, "parent_version": entry.parent_version or "",
        "status": entry.status, "status_note": entry.status_note,
        "path": dg.MetadataValue.path(str(result.policy_dir)), "rounds": dg.MetadataValue.md(rounds_markdown(rounds)),
        "rounds_plot": dg.MetadataValue.path(str(plot_rounds(rounds, None, round_dir(flywheel.models(), k) /
                                                             "rounds.png"))),
        **entry.metrics,
    })


def _latest_round(context: dg.AssetCheckExecutionContext, asset: dg.AssetsDefinition) -> int | None:
    """The round of the asset's latest materialization (the one this run just made)."""
    event = context.instance.get_latest_materialization_event(asset.key)
    partition = event.asset_materialization.partition if event and event.asset_materialization else None
    return int(partition) if partition and partition.isdigit() else None


def _entry_metrics(context: dg.AssetCheckExecutionContext, asset: dg.AssetsDefinition, kind: str,
                   root: str) -> tuple[int, dict] | None:
    k = _latest_round(context, asset)
    if k is None:
        return None
    name = prm_name(k) if kind == "prm" else policy_name(k)
    # The newest registration, rejected or not: the check reports the verdict its registration recorded.
    entry = latest_model(root, kind, source=round_source(k), name=name, include_rejected=True)
    return None if entry is None else (k, dict(entry.metrics))


def _verdict(found: tuple[int, dict] | None, judge, severity=dg.AssetCheckSeverity.ERROR) -> dg.AssetCheckResult:
    if found is None:
        return dg.AssetCheckResult(passed=False, severity=severity, description="no registered round to check")
    k, metrics = found
    verdict = judge(k, metrics)
    return dg.AssetCheckResult(passed=verdict.passed, severity=severity, description=f"round {k}: "
                               f"{verdict.description}", metadata={"round": k})


@dg.asset_check(asset=flywheel_prm, blocking=True, description="The round's PRM is no worse than the last "
                "round's on this round's held-out samples (ProcessBench F1, within the resource's prm_tolerance); "
                "a warning under on_rejected_prm='keep_last'.")
def flywheel_prm_no_worse(context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource,
                          flywheel: FlywheelResource) -> dg.AssetCheckResult:
    found = _entry_metrics(context, flywheel_prm, "prm", warehouse.get().root)
    # keep_last: RL goes on with the last accepted PRM, so a rejected one warns instead of blocking.
    severity = dg.AssetCheckSeverity.ERROR if flywheel.on_rejected_prm == "stop" else dg.AssetCheckSeverity.WARN
    return _verdict(found, lambda k, m: prm_no_worse(k, m, flywheel.prm_tolerance), severity)


@dg.asset_check(asset=flywheel_policy, blocking=True, description="The policy's held-out accuracy did not collapse "
                "in the round's RL (falls at most collapse_tolerance).")
def flywheel_policy_holds(context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource,
                          flywheel: FlywheelResource) -> dg.AssetCheckResult:
    found = _entry_metrics(context, flywheel_policy, "policy", warehouse.get().root)
    return _verdict(found, lambda k, m: policy_holds(m, flywheel.collapse_tolerance))


@dg.asset_check(asset=flywheel_policy, description="Hacking signals: steps and characters per completion stay "
                "within hacking_band of round 0's starting policy (a warning).")
def flywheel_hacking_band(context: dg.AssetCheckExecutionContext, warehouse: WarehouseResource,
                          flywheel: FlywheelResource) -> dg.AssetCheckResult:
    root = warehouse.get().root
    found = _entry_metrics(context, flywheel_policy, "policy", root)
    start = latest_model(root, "policy", source=round_source(0), name=policy_name(0))
    reference = dict(start.metrics) if start else {}
    return _verdict(found, lambda k, m: hacking_in_band(m, reference, flywheel.hacking_band),
                    dg.AssetCheckSeverity.WARN)


FLYWHEEL_ASSETS = [flywheel_samples, flywheel_labels, flywheel_prm, flywheel_policy]
