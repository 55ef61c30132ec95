"""Verification assets: formal step checks (SymPy, Z3), LLM-judge votes, and the consensus of all methods."""

# No `from __future__ import annotations`: Dagster reads Config/resource annotations at definition time.
import dagster as dg

from assets.config_base import Mirror, derive
from assets.generation import partition_prompter
from assets.labeling import METHOD_ASSETS  # the assets made from the labeler registry
from assets.metadata import md_table
from assets.partitions import PARTITIONS, day_and_source
from assets.resources import GenerationResource, WarehouseResource
from prm.datagen import first_errors_truth
from prm.label_audit import JudgeOutcomeAgreement, JudgeOutcomeBand, audit_markdown, judge_outcome_verdict
from prm.labeling import (
    POLICIES,
    REFERENCE_METHOD,
    REFERENCE_TASKS,
    ConsensusConfig,
    JudgeConfig,
    ReferenceConfig,
    agreement_markdown,
    consensus_partition,
    derive_partition,
    judge_partition,
    pairwise_agreement,
    verify_partition,
)


class FormalConfig(derive(Mirror(ReferenceConfig))):
    """SymPy/Z3 step checks and the sympy_ref labeler (prm.labeling.ReferenceConfig's fields): timeout_s per step
    for both, a hung or exploding check becomes `unverifiable`."""


@dg.asset(partitions_def=PARTITIONS, group_name="verification", kinds={"sympy", "z3", "delta"},
          deps=["solutions"], description="Exact step verdicts: SymPy for arithmetic, Z3 for logic; "
          "unverifiable where a step asserts nothing checkable. On dataset problems also sympy_ref: SymPy plus the "
          "gold answer and the reference solution's values.")
def formal_verifications(context: dg.AssetExecutionContext, config: FormalConfig,
                         warehouse: WarehouseResource) -> dg.MaterializeResult:
    day, source = day_and_source(context)
    wh = warehouse.get()
    run = verify_partition(wh, source=source, day=day, run_id=context.run_id, timeout_s=config.timeout_s)
    # Dataset problems (GSM8K, MATH, imported solutions) carry a gold answer and often a reference solution: the
    # reference check reads them. Generated tasks have exact truth, and their labels stay as they were.
    tasks = {p["task"] for p in wh.read_partition("problems", source, day).to_pylist()}
    ref = None
    if tasks & set(REFERENCE_TASKS):
        ref = derive_partition(wh, REFERENCE_METHOD, config.to_library(), source=source,
                               day=day, run_id=context.run_id)
    ref_meta = {} if ref is None else {
        "sympy_ref_rules": md_table([{"rule": k, "solutions": v} for k, v in sorted(ref.extra["counts"].items())])}
    return dg.MaterializeResult(metadata={
        **ref_meta,
        "dagster/row_count": len(run.verifications),
        "verdicts": md_table([{"status": k, "steps": v} for k, v in sorted(run.counts.items())]),
        "preview": md_table([{k: r.get(k) for k in ("solution_id", "step_idx", "verifier", "status", "detail")}
                             for r in run.verifications if r["status"] != "correct"][:10]),
    })


class JudgeAssetConfig(derive(
        Mirror(JudgeConfig,
               exclude={"model"},  # the `judge` resource's model: to_library(model=judge.model)
               # The fine-tuned judge's card is its greedy verdict: one vote at temperature 0 (the library's 5 at
               # 0.7 is ProcessBench's sampling, for a strong judge on a GPU box).
               defaults={"k": 1, "temperature": 0.0}),
        # The check judge_agrees_with_outcomes: share of wrong-answer solutions in which the judge names an error
        # (fail_below blocks consensus below it).
        Mirror(JudgeOutcomeBand, prefix="agreement_"),
)):
    """LLM-judge votes (prm.labeling.JudgeConfig's fields); the judge model is the `judge` resource (the fine-tuned
    SmolLM2 judge here, a strong model on a GPU box: give that one k=5 votes at temperature 0.7)."""

    max_solutions: int | None = None  # None: every solution of the partition (a cap bounds the cost)

    def band(self) -> JudgeOutcomeBand:
        return self.library(JudgeOutcomeBand)


@dg.asset(partitions_def=PARTITIONS, group_name="verification", kinds={"vllm", "delta"}, pool="engine",
          deps=["solutions"], description="k judge votes per solution for the earliest wrong paragraph (or -1).")
def judgments(context: dg.AssetExecutionContext, config: JudgeAssetConfig, warehouse: WarehouseResource,
              generation: GenerationResource, judge: GenerationResource) -> dg.MaterializeResult:
    day, source = day_and_source(context)
    policy_model = generation.config().model
    judge_config = config.to_library(model=judge.model)
    wh = warehouse.get()
    run = judge_partition(wh, judge.get, judge_config, source=source, day=day, run_id=context.run_id,
                          policy_prompt=partition_prompter(context, policy_model), max_solutions=config.max_solutions)
    votes = sum(j.n_votes for j in run.judgments)
    outcome = JudgeOutcomeAgreement.of(run.judgment_rows(), wh.read_partition("solutions", source, day).to_pylist())
    band = config.band()
    return dg.MaterializeResult(metadata={
        **judge_outcome_metadata(outcome, band),
        "judge_vs_outcome": judge_outcome_verdict(outcome, band).message,
        "dagster/row_count": len(run.judgments),
        "votes": votes,
        "abstentions": run.n_abstain,
        "abstention_rate": round(run.n_abstain / votes, 3) if votes else 0.0,
        "cost_tokens": run.cost_tokens,
        "reused_judgments": run.reused,  # judged by an earlier run with these settings: not judged (nor paid) again
        "errors": len(run.errors),
        "preview": md_table([{"solution_id": j.solution_id, "votes": j.votes_json, "first_error": j.first_error,
                              "agreement": j.agreement} for j in run.judgments[:10]]),
    })


def judge_outcome_metadata(outcome: JudgeOutcomeAgreement, band: JudgeOutcomeBand) -> dict:
    """What the check judge_agrees_with_outcomes reads back: the counts and the band they were judged by."""
    return {"judge_wrong_outcomes": outcome.wrong, "judge_wrong_called_right": outcome.wrong_called_right,
            "judge_right_outcomes": outcome.right, "judge_right_called_wrong": outcome.right_called_wrong,
            "agreement_warn_below": band.warn_below, "agreement_fail_below": band.fail_below,
            "agreement_min_solutions": band.min_solutions}


def judge_outcome_from_metadata(metadata: dict) -> tuple[JudgeOutcomeAgreement, JudgeOutcomeBand]:
    """The inverse of :func:`judge_outcome_metadata` (values or Dagster metadata entries)."""
    def value(key: str) -> float:
        return getattr(metadata[key], "value", metadata[key])

    outcome = JudgeOutcomeAgreement(wrong=int(value("judge_wrong_outcomes")),
                                    wrong_called_right=int(value("judge_wrong_called_right")),
                                    right=int(value("judge_right_outcomes")),
                                    right_called_wrong=int(value("judge_right_called_wrong")))
    band = JudgeOutcomeBand(warn_below=float(value("agreement_warn_below")),
                            fail_below=float(value("agreement_fail_below")),
                            min_solutions=int(value("agreement_min_solutions")))
    return outcome, band


class ConsensusAssetConfig(derive(Mirror(ConsensusConfig))):
    """prm.labeling.ConsensusConfig's fields: policy is one of prm.labeling.consensus.POLICIES, all reported side by
    side. The default keeps MC labels where the fine-tuned judge names the same first error (Qwen's "Lessons"
    filter); formal_override would copy SymPy, which passes any step whose arithmetic holds, wrong operands
    included."""


@dg.asset(partitions_def=PARTITIONS, group_name="verification", kinds={"duckdb", "delta"},
          deps=["mc_labels", "omegaprm_labels", "formal_verifications", "judgments", *METHOD_ASSETS],
          description="Consensus labels where methods agree on the first error, and how the methods compare.")
def consensus_labels(context: dg.AssetExecutionContext, config: ConsensusAssetConfig,
                     warehouse: WarehouseResource) -> dg.MaterializeResult:
    if config.policy not in POLICIES:
        raise dg.Failure(f"unknown consensus policy {config.policy!r}; choose one of {sorted(POLICIES)}")
    day, source = day_and_source(context)
    wh = warehouse.get()
    run, reports, verdicts = consensus_partition(wh, config.to_library(), source=source, day=day,
                                                 run_id=context.run_id)
    truth = first_errors_truth(wh, source, day)
    methods = sorted({m for v in verdicts for m in v.first_errors})
    agreement = agreement_markdown(pairwise_agreement(verdicts, methods, truth or None))
    policies = md_table([{"policy": r.policy, "kept": f"{r.n_kept}/{r.n_solutions}",
                          "processbench_f1": "-" if r.audit is None or r.audit.processbench_f1 is None
                          else f"{r.audit.processbench_f1:.3f}"} for r in reports])
    context.log.info("first-error agreement\n" + agreement)
    audits = [r.audit for r in reports if r.audit is not None]
    return dg.MaterializeResult(metadata={
        "dagster/row_count": len(run.labels),
        "kept_solutions": len(run.kept),
        "agreement": dg.MetadataValue.md(agreement),
        "policies": policies,
        "audit_of_kept": dg.MetadataValue.md(audit_markdown(audits) if audits else "_no exact truth_"),
    })
