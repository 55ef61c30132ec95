"""Asset checks: thin wrappers over ``warehouse.checks`` with counts in metadata, and the table checks of every
stage (``pipelines/definitions.py`` collects them from here and from the asset modules)."""

# No `from __future__ import annotations`: Dagster reads Config/resource annotations at definition time.
import dagster as dg

from assets.check_factories import orphan_check, result, table_checks
from assets.flywheel import flywheel_labels, flywheel_policy, flywheel_samples
from assets.generation import policy_model, rollouts, solutions
from assets.labeling import METHOD_ASSETS, label_audit, mc_labels, omegaprm_labels, progress_labels
from assets.prm import label_source_comparison, prm_evaluation, prm_model, prm_training_set
from assets.problems import problems
from assets.resources import GenerationResource, WarehouseResource
from assets.rl import rl_run
from assets.verification import consensus_labels, formal_verifications, judge_outcome_from_metadata, judgments
from prm.best_of_n import CONSTANT, LENGTH
from prm.evaluation import latest_f1
from prm.format import StepTagConvention
from prm.implicit_recipe import read_recipe
from prm.label_audit import judge_outcome_verdict
from prm.labeling import ReadinessThresholds, SolutionCounts
from prm.labeling.readiness import readiness  # the module's own name: the package keeps the module
from prm.models import (
    ARITH_POLICY_NAME,
    JUDGE_NAME,
    SHIPPED_JUDGE_DIR,
    judge_card_problems,
    read_judge_card,
    resolve_model,
)
from prm.policy import card_problems, read_card
from prm.scoring import is_lm_head_folder
from prm.training import PRMArtifacts, TrainingSet, read_prm_card
from warehouse import checks as wc
from warehouse.methods import label_assets, method


@dg.asset_check(asset=problems, blocking=True, description="Every problem has a gold answer; generated "
                "problems' gold solutions end in that answer.")
def problems_gold_answers(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    return result(wc.gold_answers_consistent(warehouse.get()))


# Share of correct solutions outside this range means labels would be nearly all one class.
SOLUTION_BALANCE = (0.02, 0.98)


@dg.asset_check(asset=solutions, description=f"Share of correct solutions within {SOLUTION_BALANCE} "
                "(a policy that never or always succeeds gives one-class step labels).")
def solutions_outcome_balance(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    outcome = wc.share_within(warehouse.get(), "solutions", "is_correct", *SOLUTION_BALANCE,
                              where="status = 'ok'", min_rows=20)
    return result(outcome, dg.AssetCheckSeverity.WARN)


def _latest_metadata(context: dg.AssetCheckExecutionContext, key: dg.AssetKey) -> dict:
    """The metadata of ``key``'s latest materialization ({} when there is none)."""
    records = context.instance.fetch_materializations(dg.AssetRecordsFilter(asset_key=key), limit=1).records
    return dict(records[0].asset_materialization.metadata) if records and records[0].asset_materialization else {}


@dg.asset_check(asset=solutions, blocking=True,
                description="The solutions can support labels: most state an answer the extractor reads, and some "
                "reach the gold answer (else every label is 'bad'); thresholds are the solutions config's "
                "max_no_answer_share and min_correct.")
def solutions_can_be_labeled(context: dg.AssetCheckExecutionContext) -> dg.AssetCheckResult:
    metadata = _latest_metadata(context, solutions.key)
    if "n_solutions" not in metadata:
        return dg.AssetCheckResult(passed=False, description="the latest solutions materialization carries no "
                                   "solution counts; materialize `solutions` again")
    counts = SolutionCounts.from_metadata(metadata)
    default = ReadinessThresholds()
    thresholds = ReadinessThresholds(
        max_no_answer_share=float(getattr(metadata.get("max_no_answer_share"), "value", default.max_no_answer_share)),
        min_correct=int(getattr(metadata.get("min_correct"), "value", default.min_correct)))
    verdict = readiness(counts, thresholds)
    return dg.AssetCheckResult(passed=verdict.passed, description=verdict.message,
                               metadata={**counts.metadata(), "cause": verdict.cause})


def label_range_check(asset: dg.AssetsDefinition) -> dg.AssetChecksDefinition:
    """Blocking: soft labels are probabilities and rollout counts are consistent."""

    @dg.asset_check(asset=asset, name="step_labels_in_range", blocking=True,
                    description="soft_label in [0, 1] and 0 <= n_correct <= n_rollouts for every step label.")
    def check(warehouse: WarehouseResource) -> dg.AssetCheckResult:
        wh = warehouse.get()
        soft = wc.values_in_range(wh, "step_labels", "soft_label", 0.0, 1.0)
        counts = wc.values_in_range(wh, "step_labels", "n_correct - n_rollouts", float("-inf"), 0.0)
        ok = soft.passed and counts.passed
        return result(wc.CheckOutcome(ok, f"{soft.description}; {counts.description}",
                                       {**soft.counts, "n_correct_above_n_rollouts": counts.counts["out_of_range"]}))

    return check


# Share of steps labeled good; outside it a PRM trained on the labels learns a constant.
LABEL_BALANCE = (0.05, 0.95)


def label_balance_check(asset: dg.AssetsDefinition, method: str) -> dg.AssetChecksDefinition:
    """Warn when one method's hard labels are nearly all one class."""

    @dg.asset_check(asset=asset, name=f"{method}_label_balance",
                    description=f"Share of {method} steps labeled good within {LABEL_BALANCE}.")
    def check(warehouse: WarehouseResource) -> dg.AssetCheckResult:
        outcome = wc.share_within(warehouse.get(), "step_labels", "hard_label", *LABEL_BALANCE,
                                  where=f"method = '{method}' AND hard_label IS NOT NULL", min_rows=20)
        return result(outcome, dg.AssetCheckSeverity.WARN)

    return check


@dg.asset_check(asset=policy_model, blocking=True,
                description="The policy's card lies in the band the labelers need (held-out accuracy and "
                "per-step error at the stop rule's difficulty).")
def policy_card_in_band() -> dg.AssetCheckResult:
    card = read_card(resolve_model(ARITH_POLICY_NAME))
    problems = card_problems(card)
    row = next((r for r in (card or {}).get("eval", {}).get("rows", [])
                if r.get("n_ops") == (card or {}).get("config", {}).get("eval_ops")), {})
    ops = (card or {}).get("config", {}).get("eval_ops")
    desc = (f"in band at {ops} steps: accuracy {row.get('answer_accuracy')}, step error {row.get('step_error_rate')}"
            if not problems else "; ".join(problems) + ". The labels of such a policy are mostly one "
            "class: restore the shipped checkpoint (`git checkout -- prm/shipped/arith-policy`, and remove "
            "models/arith-policy) or rebuild with more steps (`make policy`).")
    return dg.AssetCheckResult(passed=not problems, description=desc, metadata={
        "answer_accuracy": float(row.get("answer_accuracy", -1.0)),
        "step_error_rate": float(row.get("step_error_rate", -1.0)),
    })


@dg.asset_check(asset=judgments, blocking=True,
                description="The fine-tuned judge's card lies in its band (held-out coverage, accuracy on right "
                "solutions and first-error accuracy): its votes are worth feeding to consensus.")
def judge_card_in_band(judge: GenerationResource) -> dg.AssetCheckResult:
    if judge.model != JUDGE_NAME:
        return dg.AssetCheckResult(passed=True, description=f"the judge is {judge.model}, not the shipped "
                                   f"{JUDGE_NAME}: it has no card to check")
    resolve_model(JUDGE_NAME)  # merges the shipped adapter, refusing one whose digest differs from its card
    card = read_judge_card(SHIPPED_JUDGE_DIR)  # the shipped card: a merged copy may predate an edited card
    problems = judge_card_problems(card)
    table = (card or {}).get("eval", {})
    desc = ("in band: " + ", ".join(f"{k} {table.get(k)}" for k in ("coverage", "correct_acc", "first_error_acc"))
            if not problems else "; ".join(problems) + ". Restore the shipped adapter (`git checkout -- "
            "prm/shipped/smollm2-judge`, and remove models/smollm2-judge) or rebuild it (`make judge`).")
    return dg.AssetCheckResult(passed=not problems, description=desc, metadata={
        k: float(table.get(k, -1.0)) for k in ("coverage", "correct_acc", "first_error_acc", "processbench_f1")})


@dg.asset_check(asset=judgments, blocking=True,
                description="The judge agrees with the outcome on the data it judged: it names an error in the "
                "solutions whose final answer is wrong (band: the judgments config's agreement_* fields). The card "
                "check above reads the judge's own test set; this one reads this partition.")
def judge_agrees_with_outcomes(context: dg.AssetCheckExecutionContext) -> dg.AssetCheckResult:
    metadata = _latest_metadata(context, judgments.key)
    if "judge_wrong_outcomes" not in metadata:
        return dg.AssetCheckResult(passed=False, description="the latest judgments materialization carries no "
                                   "judge-vs-outcome counts; materialize `judgments` again")
    outcome, band = judge_outcome_from_metadata(dict(metadata))
    verdict = judge_outcome_verdict(outcome, band)
    severity = dg.AssetCheckSeverity.ERROR if verdict.severity == "fail" else dg.AssetCheckSeverity.WARN
    return dg.AssetCheckResult(passed=verdict.severity == "ok", severity=severity, description=verdict.message,
                               metadata={"agreement": -1.0 if outcome.agreement is None else outcome.agreement,
                                         "wrong_outcomes": outcome.wrong,
                                         "wrong_called_right": outcome.wrong_called_right})


# Which asset writes which methods of the method table (warehouse/methods/table.py) into step_labels.
LABEL_WRITERS: tuple[tuple[dg.AssetsDefinition, tuple[str, ...]], ...] = tuple(
    (a, label_assets()[a.key.to_user_string()]) for a in (mc_labels, omegaprm_labels, progress_labels,
                                                          formal_verifications, judgments, consensus_labels,
                                                          *METHOD_ASSETS))


def step_label_checks(asset: dg.AssetsDefinition, methods: tuple[str, ...]) -> list[dg.AssetChecksDefinition]:
    """Schema, keys, orphans (of the asset's own methods), label ranges and class balance of each method."""
    names = ", ".join(f"'{method(m).name}'" for m in methods)
    return [*table_checks(asset, "step_labels"),
            orphan_check(asset, "step_labels", "solutions", "solution_id", f"method IN ({names})"),
            label_range_check(asset), *(label_balance_check(asset, m) for m in methods)]


# The checks made by the factories above, one list per stage. pipelines/definitions.py collects every check of
# this module and of the asset modules (the decorated ones and these lists), so a new check is written once.
DATA_TABLE_CHECKS = [
    *table_checks(problems, "problems"),
    *table_checks(solutions, "solutions"),
    *table_checks(solutions, "steps"),
    orphan_check(solutions, "solutions", "problems", "problem_id"),
    orphan_check(solutions, "steps", "solutions", "solution_id"),
    *table_checks(rollouts, "rollouts"),
    orphan_check(rollouts, "rollouts", "solutions", "solution_id"),
    *table_checks(label_audit, "label_audit"),
    *table_checks(formal_verifications, "verifications"),
    orphan_check(formal_verifications, "verifications", "solutions", "solution_id"),
    *table_checks(judgments, "judgments"),
    orphan_check(judgments, "judgments", "solutions", "solution_id"),
    *(check for asset, methods in LABEL_WRITERS for check in step_label_checks(asset, methods)),
]


@dg.asset_check(asset=prm_training_set, blocking=True,
                description="No problem appears in two splits (a leak would flatter every held-out number).")
def prm_splits_disjoint() -> dg.AssetCheckResult:
    rows = TrainingSet.load(PRMArtifacts.default().training_set).rows
    splits: dict[str, set[str]] = {}
    for r in rows:
        splits.setdefault(r["problem_id"], set()).add(r["split"])
    leaks = sorted(p for p, s in splits.items() if len(s) > 1)
    return dg.AssetCheckResult(passed=not leaks, metadata={"problems": len(splits), "leaked": len(leaks)},
                               description=f"{len(leaks)} problems in two splits, e.g. {leaks[:3]}" if leaks
                               else f"{len(splits)} problems, each in one split")


@dg.asset_check(asset=prm_training_set, blocking=True,
                description="The train split holds both good and bad steps (one class trains a constant).")
def prm_both_classes() -> dg.AssetCheckResult:
    stats = TrainingSet.load(PRMArtifacts.default().training_set).stats
    good, bad = stats.good_steps.get("train", 0), stats.bad_steps.get("train", 0)
    return dg.AssetCheckResult(passed=good > 0 and bad > 0, metadata={"good_steps": good, "bad_steps": bad},
                               description=f"train: {good} good and {bad} bad steps")


@dg.asset_check(asset=prm_evaluation, description="The PRM's ProcessBench F1 beats the constant baseline "
                "(a PRM that does not has learned nothing about steps).")
def prm_beats_constant_baseline(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    values = {row.model: row.value for row in latest_f1(warehouse.get().root, "prm_evaluation")}
    constant = values.pop(CONSTANT, None)
    prm = [v for name, v in values.items() if name != LENGTH and v is not None]
    passed = bool(prm) and constant is not None and prm[0] > constant
    return dg.AssetCheckResult(passed=passed, severity=dg.AssetCheckSeverity.WARN,
                               metadata={"prm_f1": prm[0] if prm else -1.0, "constant_f1": constant or 0.0},
                               description=f"PRM F1 {prm[0] if prm else None} vs constant {constant}")


def threshold_chosen_on_validation(asset: dg.AssetsDefinition, experiment: str) -> dg.AssetChecksDefinition:
    """Warns when the latest run's validation split lacked wrong or correct solutions, so its PRMs' thresholds
    fell back to the default (the partition has too few problems of one outcome; the run still succeeds)."""

    @dg.asset_check(asset=asset, name=f"{experiment}_threshold_chosen_on_validation",
                    description="Validation holds wrong and correct solutions, so each PRM's threshold was "
                    "chosen there (else the default 0.5 applied; more problems in the partition fix it).")
    def check(warehouse: WarehouseResource) -> dg.AssetCheckResult:
        rows = [r for r in latest_f1(warehouse.get().root, experiment) if r.model != CONSTANT]
        fallback = {r.model: r.chosen_on for r in rows if r.chosen_on != "validation"}
        return dg.AssetCheckResult(
            passed=bool(rows) and not fallback, severity=dg.AssetCheckSeverity.WARN,
            metadata={"scorers": len(rows), "default_threshold": len(fallback)},
            description=next(iter(fallback.values()), None) if fallback else f"{len(rows)} thresholds chosen on "
            "validation")

    return check


@dg.asset_check(asset=prm_model, blocking=True, description="The PRM folder declares its step-tag convention "
                "and has a card: scoring reads it the way training wrote it.")
def prm_folder_is_scorable() -> dg.AssetCheckResult:
    try:
        folder = PRMArtifacts.default().trained_model()
        card = read_prm_card(folder)
        if is_lm_head_folder(folder):  # an LM-head PRM: its recipe names the reference it reads
            reference, beta, _ = read_recipe(folder)
            described = f"LM-head PRM scored against {reference} (beta {beta})"
        else:
            convention = StepTagConvention.load(folder)
            described = f"convention {convention.name}, tag {convention.step_tag!r}"
    except (FileNotFoundError, ValueError) as exc:
        return dg.AssetCheckResult(passed=False, description=str(exc))
    return dg.AssetCheckResult(passed=True, description=described,
                               metadata={"train_solutions": int(card.get("rows", {}).get("train", 0))})


PRM_TABLE_CHECKS = [threshold_chosen_on_validation(prm_evaluation, "prm_evaluation"),
                    threshold_chosen_on_validation(label_source_comparison, "label_source_comparison"),
                    *table_checks(prm_evaluation, "prm_evaluations"), *table_checks(prm_evaluation, "step_scores"),
                    *table_checks(label_source_comparison, "prm_evaluations")]
RL_TABLE_CHECKS = table_checks(rl_run, "rl_metrics")
FLYWHEEL_TABLE_CHECKS = [*table_checks(flywheel_samples, "solutions"), *table_checks(flywheel_labels, "step_labels"),
                         label_range_check(flywheel_labels), *table_checks(flywheel_policy, "models")]
