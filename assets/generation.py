"""Generation assets: the warm-started policy, sampled solutions with their steps, and step rollouts."""

# No `from __future__ import annotations`: Dagster reads Config/resource annotations at definition time.

import json
from dataclasses import replace
from pathlib import Path

import dagster as dg
from pydantic import Field

from assets.config_base import CheckedConfig, Mirror, derive
from assets.metadata import histogram, md_table
from assets.partitions import PARTITIONS, day_and_source
from assets.resources import GenerationResource, WarehouseResource
from prm.datagen import (
    IMPORTED_MARK,
    SampleStats,
    accuracy_by_gold_steps,
    intake_rows,
    mc_by_step,
    replace_solutions,
    rollout_rows,
    sample_solution_rows,
    sampling_key,
    solutions_to_label,
    synthetic_solution_rows,
    with_gold,
)
from prm.format import DEFAULT_TEMPLATE, Prompter, PromptTemplate
from prm.generation import SOLUTION_MAX_TOKENS
from prm.labeling import ReadinessThresholds, SolutionCounts
from prm.labeling.readiness import readiness  # the module's own name: the package keeps the module
from prm.models import ARITH_POLICY_NAME, model_cache_dir, prompter_for, resolve_model, weights_digest
from prm.policy import PolicyTrainConfig, build_policy, read_card
from prm.tasks import inbox_file, load_solutions
from warehouse import ModelEntry, Warehouse, register_models, today


class PolicyConfig(derive(Mirror(PolicyTrainConfig, optional=True))):
    """The default policy is the checkpoint shipped in the repository. Set ``rebuild`` (or any field of
    prm.policy.PolicyTrainConfig, each None = the library's default: ``overrides()``) to train one into the model
    cache, where ``arith-policy`` then resolves; a cached build with the same config is reused, not retrained."""

    rebuild: bool = False  # train the default recipe locally instead of using the shipped checkpoint


@dg.asset(group_name="generation", kinds={"pytorch", "transformers"},
          description="The default policy: a tiny char-level Llama warm-started on gold arithmetic demonstrations "
          "(shipped checkpoint, or a local rebuild).")
def policy_model(context: dg.AssetExecutionContext, config: PolicyConfig,
                 warehouse: WarehouseResource) -> dg.MaterializeResult:
    if config.rebuild or config.overrides():
        out = model_cache_dir() / ARITH_POLICY_NAME
        context.log.info(f"training the policy into {out} (stops on max_steps or the quality rule)")
        build_policy(out, PolicyTrainConfig(**config.overrides()))
    path = resolve_model(ARITH_POLICY_NAME)  # verifies the weights against the card's digests
    card = read_card(path) or {}
    context.log.info(f"policy at {path}")
    entry = _policy_entry(path, card)
    register_models(warehouse.get(), [entry], source="policy", day=today(), run_id=context.run_id,
                    writer="policy_model")
    return dg.MaterializeResult(metadata={
        "path": dg.MetadataValue.path(str(path)),
        "version": entry.version,
        "train_steps": int(card.get("train_steps", 0)),
        "stopped_by": str(card.get("stopped_by", "")),
        "config_hash": card.get("config_hash", ""),
        "accuracy_by_steps": dg.MetadataValue.md(card.get("eval_markdown", "_no evaluation in the card_")),
    })


def _policy_entry(path: Path, card: dict) -> ModelEntry:
    """The registry entry of the policy: trained from scratch on generated problems, so no parent and no
    warehouse tables; its card's config (and hash) is how it was trained, held-out accuracy its metrics."""
    overall = next((r for r in (card.get("eval") or {}).get("rows", []) if r.get("n_ops") == 0), {})
    metrics = {k: overall[k] for k in ("answer_accuracy", "step_error_rate") if isinstance(overall.get(k), float)}
    training = {k: card[k] for k in ("config_hash", "config", "train_steps", "stopped_by") if k in card}
    return ModelEntry(name=ARITH_POLICY_NAME, version=weights_digest(path), kind="policy", uri=str(path),
                      training=training, metrics=metrics)


class SolutionsConfig(derive(
        # None/None: the question goes in bare (the embedded policy's prompt, unchanged). An instruct model wants an
        # answer-format instruction the extractor reads, e.g. "... End with: The answer is: <number>".
        Mirror(PromptTemplate),
        # The blocking check `solutions_can_be_labeled` stops the run before labeling when more than this share of
        # solutions states no extractable answer, or fewer than min_correct reach the gold answer (1.0 / 0: off).
        Mirror(ReadinessThresholds),
)):
    """Sampling of policy solutions for the partition's problems, and the prompt around each question
    (prm.format.PromptTemplate's and prm.labeling.ReadinessThresholds' fields). The sampling knobs feed
    prm.generation.GenerationRequest (held to its defaults by a parity test).

    The prompt template (system prompt, answer-format instruction) is recorded on the materialization;
    rollouts and labelers rebuild the same prompts from it (:func:`partition_prompter`)."""

    n_samples: int = 4  # solutions per problem; both outcomes per problem is what labels need
    temperature: float = 1.0  # the policy's own distribution; an instruct model (SmolLM2) wants ~0.7
    top_p: float = 1.0  # 1.0: no nucleus truncation (the policy's own distribution)
    stop: list[str] = Field(default_factory=list)  # extra stop strings (EOS always stops); [] = none
    max_tokens: int = SOLUTION_MAX_TOKENS
    seed: int = 0
    # A rerun (after a kill, or of the whole job) keeps the partition's solutions, and with them every label
    # already paid for, when they were sampled from the same model, prompt, problems and sampling numbers above.
    resample: bool = False  # sample afresh anyway, which deletes the rows derived from the old solutions

    def template(self) -> PromptTemplate:
        return self.library(PromptTemplate)

    def thresholds(self) -> ReadinessThresholds:
        return self.library(ReadinessThresholds)


def _template_json(template: PromptTemplate) -> str:
    return json.dumps({"system_prompt": template.system_prompt, "instruction": template.instruction})


def partition_prompter(context: dg.AssetExecutionContext, model: str) -> Prompter:
    """The prompt builder the partition's solutions were sampled with: ``model``'s tokenizer and the template the
    latest ``solutions`` materialization of this partition recorded (the default template when none)."""
    records = context.instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey("solutions"), asset_partitions=[context.partition_key]),
        limit=1).records
    last = records[0].asset_materialization if records else None
    entry = last.metadata.get("prompt_template") if last else None
    template = DEFAULT_TEMPLATE if entry is None else PromptTemplate(**json.loads(entry.value))
    return prompter_for(model, template)


@dg.asset(partitions_def=PARTITIONS, group_name="generation", kinds={"vllm", "delta"}, pool="engine",
          deps=["problems", "policy_model"],
          description="n sampled solutions per problem, split into steps, graded, with exact truth where known "
          "(logic problems: the gold derivation and corrupted copies).")
def solutions(context: dg.AssetExecutionContext, config: SolutionsConfig, warehouse: WarehouseResource,
              generation: GenerationResource) -> dg.MaterializeResult:
    day, source = day_and_source(context)
    wh = warehouse.get()
    problems = wh.read_partition("problems", source, day).to_pylist()
    if not problems:
        raise dg.Failure(f"no problems in partition {day}|{source}; materialize `problems` for it first")
    if any(IMPORTED_MARK in (p.get("meta_json") or "") for p in problems):
        return _imported_solutions(context, config, wh, inbox_file(warehouse.inbox_path(), source), problems, day)
    logic = [p for p in problems if p["task"] == "logic"]
    sampled = [p for p in problems if p["task"] != "logic"]
    foreign = sorted({p["task"] for p in sampled if not p["task"].startswith("arith")})
    if foreign and generation.model == ARITH_POLICY_NAME:
        raise dg.Failure(f"partition {day}|{source} holds {', '.join(foreign)} problems, and the generation model is "
                         f"the embedded char-level {ARITH_POLICY_NAME}, which writes only generated arithmetic; set "
                         "resources.generation.config.model to an instruct LLM (a recipe's policy.model: "
                         "`prm-pipeline run RECIPE.yaml`, or a <dataset>.yaml sidecar beside the inbox file)")
    prompter = prompter_for(generation.model, config.template()) if sampled else None
    # top_p and stop enter the key only when set, so keys (and kept solutions) of earlier runs stay valid.
    knobs = {k: v for k, v in (("top_p", config.top_p), ("stop", list(config.stop))) if v not in (1.0, [])}
    key = sampling_key(problems, n_samples=config.n_samples, temperature=config.temperature,
                       max_tokens=config.max_tokens, seed=config.seed, **knobs,
                       model=generation.model_version() if sampled else None,
                       prompt_version=prompter.version if prompter else None)
    kept = None if config.resample else _kept_solutions(context, wh, source, day, key)
    if kept is not None:
        sols, n_steps, stats, earlier_run = kept
        context.log.info(f"reusing the {len(sols)} solutions of run {earlier_run} for {day}|{source}: same model, "
                         "problems and sampling config (set resample: true to sample afresh)")
        return _solutions_result(problems, sols, n_steps, stats, key, config, reused_from=earlier_run)
    sols, steps, stats = synthetic_solution_rows(logic, n=config.n_samples, seed=config.seed)
    if sampled and prompter is not None:
        backend = generation.get()
        context.log.info(f"sampling {config.n_samples} solutions for {len(sampled)} problems with {generation.model}")
        more_sols, more_steps, stats = sample_solution_rows(
            backend, sampled, prompter, model=generation.model_version(), n=config.n_samples, seed=config.seed,
            max_tokens=config.max_tokens, temperature=config.temperature, top_p=config.top_p, stop=tuple(config.stop))
        sols, steps = sols + more_sols, steps + more_steps
    derived = replace_solutions(wh, sols, steps, source=source, day=day, run_id=context.run_id)
    if derived:
        context.log.info(f"re-sampling {day}|{source}: removed {derived} rows derived from the old solutions")
    return _solutions_result(problems, sols, len(steps), stats, key, config, reused_from=None)


def _imported_solutions(context: dg.AssetExecutionContext, config: SolutionsConfig, wh: Warehouse, path: Path,
                        problems: list[dict], day: str) -> dg.MaterializeResult:
    """The solutions of the partition's solution file, stored as they are (nothing sampled), graded against the
    gold answers its problems hold; the rows derived from earlier solutions go first."""
    source = problems[0]["source"]
    try:
        loaded = load_solutions(path, source=source, task=problems[0]["task"])
    except ValueError as exc:
        raise dg.Failure(description=f"cannot read the solutions of source {source!r}: {exc}") from exc
    ids = {p["problem_id"] for p in problems}
    loaded = with_gold(replace(loaded, records=tuple(r for r in loaded.records if r.problem_id in ids)),
                       {p["problem_id"]: p["gold_answer"] for p in problems})
    sols, steps, counts = intake_rows(loaded)
    derived = replace_solutions(wh, sols, steps, source=source, day=day, run_id=context.run_id)
    if derived:
        context.log.info(f"re-reading {day}|{source}: removed {derived} rows derived from the old solutions")
    context.log.info(f"stored {len(sols)} solutions of {path.name} as they are ({loaded.format}); nothing sampled")
    solution_counts = SolutionCounts.from_rows(sols)
    verdict = readiness(solution_counts, config.thresholds())
    return dg.MaterializeResult(metadata={
        "dagster/row_count": len(sols),
        "steps": len(steps),
        **solution_counts.metadata(),
        "max_no_answer_share": config.max_no_answer_share,
        "min_correct": config.min_correct,
        "readiness": verdict.message,
        "imported": True,  # read from a solution file, not sampled
        "solution_format": loaded.format,
        **{f"intake_{k}": v for k, v in counts.metadata().items()},
        "accuracy": round(sum(bool(s["is_correct"]) for s in sols) / max(len(sols), 1), 3),
        "first_error_truth": histogram([s.get("first_error_truth") for s in sols], "first wrong step (-1 = none)"),
        "preview": md_table([{k: s.get(k) for k in ("problem_id", "model", "final_answer", "is_correct",
                                                     "first_error_truth", "text")} for s in sols[:8]]),
    })


def _kept_solutions(context: dg.AssetExecutionContext, wh: Warehouse, source: str, day: str,
                    key: str) -> tuple[list[dict], int, SampleStats, str] | None:
    """The partition's solutions when they can stand: the latest materialization had ``key``, and every
    stored solution and step row was written by that materialization's run (a run killed between its two
    writes, or one that never recorded its materialization, leaves rows that do not qualify)."""
    records = context.instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=context.asset_key, asset_partitions=[context.partition_key]), limit=1).records
    if not records:
        return None
    last = records[0].asset_materialization
    entry = last.metadata.get("sampling_key") if last else None
    if entry is None or entry.value != key:
        return None
    # The run that wrote the rows: the materialization's own, or the one it reused in turn.
    reused = last.metadata.get("reused_from_run")
    writer = reused.value if reused else records[0].run_id
    sols = wh.read_partition("solutions", source, day).to_pylist()
    steps = wh.read_partition("steps", source, day).column("run_id").to_pylist()
    if not sols or {s["run_id"] for s in sols} | set(steps) != {writer}:
        return None
    return sols, len(steps), SampleStats.from_rows(sols), writer


def _solutions_result(problems: list[dict], sols: list[dict], n_steps: int, stats: SampleStats, key: str,
                      config: SolutionsConfig, reused_from: str | None) -> dg.MaterializeResult:
    by_steps = accuracy_by_gold_steps(problems, sols)
    counts = SolutionCounts.from_rows(sols)
    verdict = readiness(counts, config.thresholds())
    return dg.MaterializeResult(metadata={
        "dagster/row_count": len(sols),
        "steps": n_steps,
        **counts.metadata(),  # n_no_answer, n_truncated, n_correct, ... read by the check solutions_can_be_labeled
        "max_no_answer_share": config.max_no_answer_share,
        "min_correct": config.min_correct,
        "readiness": verdict.message,
        "prompt_template": _template_json(config.template()),
        "reused": reused_from is not None,  # kept from an earlier run, labels and all; nothing was sampled
        **({"reused_from_run": reused_from} if reused_from else {}),
        "sampling_key": key,
        "errors": stats.n_errors,
        "accuracy": round(stats.accuracy, 3),
        "completion_tokens": stats.completion_tokens,
        "prompt_tokens": stats.prompt_tokens,
        "accuracy_by_gold_steps": md_table(by_steps),
        "first_error_truth": histogram([s.get("first_error_truth") for s in sols if s["status"] == "ok"],
                                       "first wrong step (-1 = none)"),
        "preview": md_table([{k: s.get(k) for k in ("problem_id", "sample_idx", "final_answer", "is_correct",
                                                     "first_error_truth", "text")} for s in sols[:8]]),
    })


class RolloutsConfig(CheckedConfig):
    """Monte-Carlo rollouts from every step prefix of the partition's solutions (prompts rebuilt with the
    solutions' template). The sampling knobs feed prm.generation.GenerationRequest (held to its defaults by a
    parity test)."""

    n_rollouts: int = 4  # completions per prefix; labelers top up from here (prefix_hash cache)
    temperature: float = 1.0
    top_p: float = 1.0  # set it (and stop) as the solutions were sampled: MC estimates the policy's own outcomes
    stop: list[str] = Field(default_factory=list)
    max_tokens: int = SOLUTION_MAX_TOKENS
    seed: int = 1  # distinct from the solutions' seed so rollouts are fresh samples


@dg.asset(partitions_def=PARTITIONS, group_name="generation", kinds={"vllm", "delta"}, pool="engine",
          deps=["solutions"],
          description="N completions from each step prefix of every solution, with whether they reach gold.")
def rollouts(context: dg.AssetExecutionContext, config: RolloutsConfig, warehouse: WarehouseResource,
             generation: GenerationResource) -> dg.MaterializeResult:
    day, source = day_and_source(context)
    wh = warehouse.get()
    # The labelers' own view of the partition: the same solutions, spans and prompt, so the same prefix_hash.
    sols = solutions_to_label(wh, source, day, partition_prompter(context, generation.model))
    if not sols:  # no policy writes logic: no rollouts
        return dg.MaterializeResult(metadata={"dagster/row_count": 0, "skipped": "no policy-sampled solutions"})
    backend = generation.get()
    targets = [s.target(k) for s in sols for k in range(len(s.steps))]
    context.log.info(f"{config.n_rollouts} rollouts from each of {len(targets)} step prefixes")
    rows = rollout_rows(backend, targets, config.n_rollouts, model=generation.model_version(), seed=config.seed,
                        max_tokens=config.max_tokens, temperature=config.temperature, top_p=config.top_p,
                        stop=tuple(config.stop))
    wh.write("rollouts", rows, source=source, day=day, run_id=context.run_id, writer="rollouts", replace=True)
    return dg.MaterializeResult(metadata={
        "dagster/row_count": len(rows),
        "prefixes": len(targets),
        "completion_tokens": sum(r.get("completion_tokens") or 0 for r in rows),
        "errors": sum(r["finish_reason"] == "error" for r in rows),
        "mc_by_step": md_table(mc_by_step(rows)),
    })
