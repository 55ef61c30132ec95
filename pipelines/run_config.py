"""A recipe as the Dagster run config of each job, checked against the assets' own config classes.

This module alone maps recipe sections (:mod:`pipelines.recipe`, plain data) onto the asset configs and resources;
the asset configs own no knob either: they are derived from the library configs (assets.config_base), which own
every setting and its default. A recipe field left out is left out of the run config. A recipe field named as the
asset's field (``prm.head``, ``policy.kv_cache_gib``, ``checks.min_correct``) reaches it by that name; the others are
renamed below. A field the recipe sets that this checkout's asset configs lack is an error (never silently dropped),
so a recipe cannot look applied when it is not.

>>> from pipelines.recipe import parse_recipe
>>> recipe = parse_recipe({"policy": {"model": "smollm2-135m-instruct"}, "sampling": {"n": 2}})
>>> recipe_run_config(recipe, "refresh")["ops"]["solutions"]["config"]
{'n_samples': 2}
>>> recipe_run_config(recipe, "prm")["ops"]["prm_model"]["config"]["base_model"]
'smollm2-135m-instruct'
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from assets.generation import RolloutsConfig, SolutionsConfig
from assets.labeling import MCLabelsConfig, OmegaPRMLabelsConfig
from assets.prm import ComparisonAssetConfig, PRMDataConfig, PRMTrainAssetConfig
from assets.problems import ProblemsConfig
from assets.resources import FlywheelResource, GenerationResource
from assets.rl import RLAssetConfig
from assets.search import SearchAssetConfig
from assets.verification import JudgeAssetConfig
from pipelines.recipe import JOBS, Recipe, RecipeError
from prm.tasks import BUILTIN_SOURCES
from warehouse.methods import method, method_names, recipe_label_assets

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


def prm_backbone(recipe: Recipe) -> str:
    """The model the PRM is fine-tuned from: ``prm.base_model``, else the policy (Math-Shepherd initialises its PRM
    from the generator). The one place the name is chosen: it goes to the prm_model op's ``base_model``
    (PRMTrainConfig.base_model, which prm.training hands to prm.models.resolve_model) and to the dry run's report."""
    return recipe.prm.base_model or recipe.policy.model


def rl_policy(recipe: Recipe) -> str:
    """The policy RL trains: ``rl.policy``, else the recipe's policy."""
    return recipe.rl.policy or recipe.policy.model


def search_policy(recipe: Recipe) -> str:
    """The policy test-time search samples: ``search.policy``, else the recipe's policy."""
    return recipe.search.policy or recipe.policy.model


def model_roles(recipe: Recipe) -> list[tuple[str, str, str]]:
    """(role, recipe key, model name) of every model the recipe names, as the jobs below read them."""
    return [("policy", "policy.model", recipe.policy.model), ("PRM backbone", "prm.base_model", prm_backbone(recipe)),
            ("RL policy", "rl.policy", rl_policy(recipe)), ("search policy", "search.policy", search_policy(recipe))]


def _rollout_keys() -> set[str]:
    """The labels.methods keys of the methods that continue step prefixes with the policy (and so read the rollouts
    asset's cache): mc, omegaprm, progress."""
    return {method(n).recipe_key for n in method_names("rollout")}


def recipe_selection(recipe: Recipe, job: str) -> list[str] | None:
    """The assets ``job`` materializes for ``recipe``; None: the whole job."""
    if job == "refresh" and recipe.labels.methods is not None:
        # The rollouts asset pays the rollout labelers' first rollouts; without one of them it is not needed.
        methods = set(recipe.labels.methods)
        rollouts = ["rollouts"] if methods & _rollout_keys() else []
        # What it depends on; solutions from a file carry people's first errors, which it audits every method on.
        audit = (["label_audit"] if methods & {*_rollout_keys(), "consensus"} or recipe.dataset.kind == "solutions"
                 else [])
        assets = recipe_label_assets()
        return ["problems", "solutions", *rollouts, *(assets[m] for m in recipe.labels.methods), *audit]
    if job == "prm" and not recipe.prm.compare:
        return ["prm_training_set", "prm_model", "prm_evaluation"]
    return None


def recipe_run_config(recipe: Recipe, job: str) -> dict:
    """The run config of ``job`` (one of JOBS): ops for the assets it selects, and the generation resource; a
    :class:`RecipeError` when a setting has no asset field to go to."""
    if job not in JOBS:
        raise RecipeError(f"job {job!r} has no recipe run config; use one of {JOBS}")
    try:
        return _BUILDERS[job](recipe)
    except ValueError as exc:
        raise RecipeError(f"recipe {recipe.name!r}: {exc}") from None


def _set(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


def _named(spec: Any, *, exclude: tuple[str, ...] = ()) -> dict[str, Any]:
    """The fields of a recipe section the recipe sets (not None, not empty), under their own names (a tuple as a
    list), less ``exclude`` (the fields renamed or read elsewhere)."""
    values = {f.name: getattr(spec, f.name) for f in fields(spec) if f.name not in exclude}
    return {k: list(v) if isinstance(v, tuple) else v for k, v in _set(values).items() if v != ()}


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
    """The generation resource's config: the policy (or ``model``) and its engine settings (policy's fields, named
    as GenerationConfig names them)."""
    values = {**_named(recipe.policy), **({"model": model} if model else {})}
    return {"config": _checked("resources.generation", GenerationResource, values, set(values))}


def _solution_file(recipe: Recipe) -> dict[str, Any]:
    """The problems op's settings for a solution file (nothing for a problem file)."""
    data = recipe.dataset
    if data.kind != "solutions":
        return {}
    reference = data.reference_file()
    return _set({"kind": data.kind, "reference": None if reference is None else str(reference), "task": data.task})


def _refresh(recipe: Recipe) -> dict:
    s, lb = recipe.sampling, recipe.labels
    # prompt's fields keep their names (PromptTemplate's); sampling's too, but for n (n_samples) and seed (the
    # solutions' own: rollouts and labelers keep theirs).
    shared = {**_named(s, exclude=("n", "seed")), **_named(recipe.prompt)}
    configs = {
        "problems": _set({"limit": recipe.dataset.limit, **_solution_file(recipe)}),
        "solutions": {**_set({"n_samples": s.n, "seed": s.seed}), **_named(recipe.checks), **shared},
        "rollouts": {**_set({"n_rollouts": lb.rollouts}), **shared},
        "mc_labels": {**_set({"n_rollouts": lb.rollouts, "max_rollouts_per_partition": lb.rollout_budget}), **shared},
        "omegaprm_labels": {**_set({"k": lb.omegaprm_k, "max_searches": lb.omegaprm_searches,
                                    "max_rollouts_per_partition": lb.rollout_budget}), **shared},
        "judgments": _set({"k": lb.judge_votes}),
    }
    # The solutions asset must take every prompt and sampling field; the other policy ops take the ones they have.
    for op, values in configs.items():
        required = set(values) if op == "solutions" or op not in POLICY_OPS else set(values) - set(shared)
        configs[op] = _checked(f"ops.{op}", OP_CONFIGS[op], values, required)
    return {"ops": _ops(configs, recipe_selection(recipe, "refresh")),
            "resources": {"generation": generation_resource(recipe)}}


def _prm(recipe: Recipe) -> dict:
    data = {"method": recipe.prm.label_method, "source": recipe.source}
    # prm's other fields are PRMTrainConfig's, by name; the backbone defaults to the policy.
    train = {**_named(recipe.prm, exclude=("label_method", "compare")), "base_model": prm_backbone(recipe)}
    train = _checked("ops.prm_model", PRMTrainAssetConfig, train, set(train))
    configs = {"prm_training_set": data, "prm_model": train}
    if recipe.prm.compare:
        configs["label_source_comparison"] = {"methods": list(recipe.prm.compare), "data": data, "train": train}
    return {"ops": _ops(configs, recipe_selection(recipe, "prm"))}


def _rl(recipe: Recipe) -> dict:
    # A file source trains on its own problems; the built-in generator's default reads every arithmetic source.
    source = recipe.source if recipe.source not in BUILTIN_SOURCES else None
    values = {**_named(recipe.rl, exclude=("run",)), "policy": rl_policy(recipe), **_set({"source": source})}
    return {"ops": {"rl_run": {"config": _checked("ops.rl_run", RLAssetConfig, values, set(values))}}}


def _search(recipe: Recipe) -> dict:
    # A file source searches its own held-out problems (where this checkout's search asset can read them).
    source = recipe.source if recipe.source not in BUILTIN_SOURCES else None
    values = _checked("ops.search_comparison", SearchAssetConfig, _set({"source": source}), set())
    return {"resources": {"generation": generation_resource(recipe, search_policy(recipe))},
            **({"ops": {"search_comparison": {"config": values}}} if values else {})}


def _flywheel(recipe: Recipe) -> dict:
    engine = generation_resource(recipe)["config"]
    engine.pop("model")  # each round samples its own policy: round 0's is the flywheel's
    values = {"policy": recipe.policy.model}
    return {"resources": {"flywheel": {"config": _checked("resources.flywheel", FlywheelResource, values, {"policy"})},
                          **({"generation": {"config": engine}} if engine else {})}}


_BUILDERS = {"refresh": _refresh, "prm": _prm, "rl": _rl, "search": _search, "flywheel": _flywheel}
