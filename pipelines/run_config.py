"""A recipe as the Dagster run config of each job, checked against the assets' own config classes.

Each recipe field goes to the asset configs that have a field of that meaning; a field the recipe sets that this
checkout's asset configs lack is an error (never silently dropped), so a recipe cannot look applied when it is not.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from assets.generation import RolloutsConfig, SolutionsConfig
from assets.labeling import MCLabelsConfig, OmegaPRMLabelsConfig
from assets.prm import ComparisonAssetConfig, PRMDataConfig, PRMTrainAssetConfig
from assets.problems import ProblemsConfig
from assets.resources import FlywheelResource, GenerationResource
from assets.rl import RLAssetConfig
from assets.search import SearchAssetConfig
from assets.verification import JudgeAssetConfig
from prm.tasks import BUILTIN_SOURCES

if TYPE_CHECKING:
    from pipelines.recipe import Recipe

# The config class of each op a recipe configures.
OP_CONFIGS: dict[str, type] = {
    "problems": ProblemsConfig, "solutions": SolutionsConfig, "rollouts": RolloutsConfig,
    "mc_labels": MCLabelsConfig, "omegaprm_labels": OmegaPRMLabelsConfig, "judgments": JudgeAssetConfig,
    "prm_training_set": PRMDataConfig, "prm_model": PRMTrainAssetConfig,
    "label_source_comparison": ComparisonAssetConfig, "rl_run": RLAssetConfig, "search_comparison": SearchAssetConfig,
}
# The ops that sample from the policy: each takes the recipe's prompt and sampling where its config has the field
# (rollouts continue the solutions' own prompt, so they must read it the same way).
POLICY_OPS = ("solutions", "rollouts", "mc_labels", "omegaprm_labels")


def _set(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


def _fields(cls: type) -> set[str]:
    return set(cls.model_fields)


def _checked(op: str, cls: type, values: dict[str, Any], required: set[str]) -> dict[str, Any]:
    """``values`` the config ``cls`` has; a ValueError for a ``required`` one it lacks."""
    missing = sorted(k for k in values if k in required and k not in _fields(cls))
    if missing:
        raise ValueError(f"the recipe sets {missing} for {op}, but this checkout's {cls.__name__} has no such "
                          "field, so the setting would be ignored; update the checkout or drop them from the recipe")
    return {k: v for k, v in values.items() if k in _fields(cls)}


def _ops(configs: dict[str, dict[str, Any]], selection: list[str] | None) -> dict:
    return {op: {"config": values} for op, values in configs.items()
            if values and (selection is None or op in selection)}


def generation_resource(recipe: Recipe, model: str | None = None) -> dict:
    """The generation resource's config: the policy and its engine settings."""
    p = recipe.policy
    values = _set({"model": model or p.model, "backend": p.backend, "base_url": p.base_url,
                   "max_model_len": p.max_model_len, "kv_cache_gib": p.kv_cache_gib})
    return {"config": _checked("resources.generation", GenerationResource, values, set(values))}


def _solution_file(recipe: Recipe) -> dict[str, Any]:
    """The problems op's settings for a solution file (nothing for a problem file)."""
    data = recipe.dataset
    if data.kind != "solutions":
        return {}
    reference = data.reference_file()
    return _set({"kind": data.kind, "reference": None if reference is None else str(reference), "task": data.task})


def _refresh(recipe: Recipe) -> dict:
    s, lb, prompt, checks = recipe.sampling, recipe.labels, recipe.prompt, recipe.checks
    shared = _set({"temperature": s.temperature, "top_p": s.top_p, "stop": list(s.stop) if s.stop else None,
                   "max_tokens": s.max_tokens, "system_prompt": prompt.system_prompt,
                   "instruction": prompt.instruction})
    configs = {
        "problems": _set({"limit": recipe.dataset.limit, **_solution_file(recipe)}),
        "solutions": {**_set({"n_samples": s.n, "seed": s.seed, "max_no_answer_share": checks.max_no_answer_share,
                              "min_correct": checks.min_correct}), **shared},
        "rollouts": {**_set({"n_rollouts": lb.rollouts}), **shared},
        "mc_labels": {**_set({"n_rollouts": lb.rollouts}), **shared},
        "omegaprm_labels": {**_set({"k": lb.omegaprm_k, "max_searches": lb.omegaprm_searches}), **shared},
        "judgments": _set({"k": lb.judge_votes}),
    }
    # The solutions asset must take every prompt and sampling field; the other policy ops take the ones they have.
    for op, values in configs.items():
        required = set(values) if op == "solutions" or op not in POLICY_OPS else set(values) - set(shared)
        configs[op] = _checked(f"ops.{op}", OP_CONFIGS[op], values, required)
    return {"ops": _ops(configs, recipe.selection("refresh")), "resources": {"generation": generation_resource(recipe)}}


def _prm(recipe: Recipe) -> dict:
    data = {"method": recipe.prm.label_method, "source": recipe.source}
    train = _set({"base_model": recipe.prm_base_model, "head": recipe.prm.head, "max_steps": recipe.prm.max_steps,
                  "batch_size": recipe.prm.batch_size})
    configs = {"prm_training_set": data, "prm_model": train}
    if recipe.prm.compare:
        configs["label_source_comparison"] = {"methods": list(recipe.prm.compare), "data": data, "train": train}
    return {"ops": _ops(configs, recipe.selection("prm"))}


def _rl(recipe: Recipe) -> dict:
    # A file source trains on its own problems; the built-in generator's default reads every arithmetic source.
    source = recipe.source if recipe.source not in BUILTIN_SOURCES else None
    values = _set({"policy": recipe.rl_policy, "steps": recipe.rl.steps, "source": source, "prm": recipe.rl.prm})
    return {"ops": {"rl_run": {"config": _checked("ops.rl_run", RLAssetConfig, values, set(values))}}}


def _flywheel(recipe: Recipe) -> dict:
    engine = generation_resource(recipe)["config"]
    engine.pop("model")  # each round samples its own policy: round 0's is the flywheel's
    values = {"policy": recipe.policy.model}
    return {"resources": {"flywheel": {"config": _checked("resources.flywheel", FlywheelResource, values, {"policy"})},
                          **({"generation": {"config": engine}} if engine else {})}}


def build_run_config(recipe: Recipe, job: str) -> dict:
    """The run config of ``job`` for ``recipe`` (see :meth:`pipelines.recipe.Recipe.to_run_config`)."""
    if job == "refresh":
        return _refresh(recipe)
    if job == "prm":
        return _prm(recipe)
    if job == "rl":
        return _rl(recipe)
    if job == "search":
        # A file source searches its own held-out problems (where this checkout's search asset can read them).
        source = recipe.source if recipe.source not in BUILTIN_SOURCES else None
        values = _checked("ops.search_comparison", SearchAssetConfig, _set({"source": source}), set())
        return {"resources": {"generation": generation_resource(recipe, recipe.search_policy)},
                **({"ops": {"search_comparison": {"config": values}}} if values else {})}
    return _flywheel(recipe)
