"""pipelines.run_config alone maps a recipe onto the assets' configs: the recipe is plain data that imports nothing
of it, a recipe field named as the asset's (library's) field reaches it by that name, and the PRM backbone takes
one path from the recipe to the library config that prm.training resolves."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

import pipelines.recipe
from assets.prm import PRMTrainAssetConfig
from assets.resources import GenerationResource
from assets.rl import RLAssetConfig
from pipelines.recipe import ChecksSpec, PolicySpec, PRMSpec, PromptSpec, RLSpec, parse_recipe
from pipelines.recipe_models import model_report
from pipelines.run_config import model_roles, prm_backbone, recipe_run_config
from prm.format import PromptTemplate
from prm.generation import GenerationConfig
from prm.labeling import ReadinessThresholds
from prm.training import PRMTrainConfig


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports, TYPE_CHECKING blocks and function bodies included."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def test_the_recipe_imports_neither_the_run_config_nor_the_assets() -> None:
    imported = _imports(Path(pipelines.recipe.__file__))
    assert not {m for m in imported if m == "pipelines.run_config" or m.split(".")[0] in ("assets", "dagster")}
    assert not hasattr(pipelines.recipe.Recipe, "to_run_config")


def _names(cls: type) -> set[str]:
    return {f.name for f in dataclasses.fields(cls)}


@pytest.mark.parametrize("spec,library,elsewhere", [
    (PRMSpec, PRMTrainConfig, {"label_method", "compare"}),  # the training set's method; the comparison's methods
    (PolicySpec, GenerationConfig, set()),
    (PromptSpec, PromptTemplate, set()),
    (ChecksSpec, ReadinessThresholds, set()),
])
def test_a_recipe_section_names_its_fields_as_the_library_config_does(spec, library, elsewhere) -> None:
    assert _names(spec) - elsewhere <= _names(library)


def test_the_rl_section_names_its_fields_as_the_rl_asset_does() -> None:
    assert _names(RLSpec) - {"run"} <= set(RLAssetConfig.model_fields)


def test_every_prm_field_of_a_recipe_reaches_the_library_config() -> None:
    recipe = parse_recipe({"policy": {"model": "org/policy", "max_model_len": 1024, "kv_cache_gib": 1.5},
                           "prm": {"head": "classifier", "max_steps": 12, "batch_size": 8}})
    train = PRMTrainAssetConfig(**recipe_run_config(recipe, "prm")["ops"]["prm_model"]["config"]).to_library()
    assert (train.base_model, train.head, train.max_steps, train.batch_size) == ("org/policy", "classifier", 12, 8)
    engine = GenerationResource(**recipe_run_config(recipe, "refresh")["resources"]["generation"]["config"]).config()
    assert (engine.model, engine.max_model_len, engine.kv_cache_gib) == ("org/policy", 1024, 1.5)


@pytest.mark.parametrize("prm", [{}, {"base_model": "org/backbone"}])
def test_the_prm_backbone_takes_one_path_from_the_recipe_to_the_library_config(prm: dict) -> None:
    recipe = parse_recipe({"policy": {"model": "org/policy"}, "prm": {**prm, "compare": ["mc", "truth"]}})
    name = prm.get("base_model", "org/policy")
    assert prm_backbone(recipe) == name
    assert ("PRM backbone", "prm.base_model", name) in model_roles(recipe)
    ops = recipe_run_config(recipe, "prm")["ops"]
    # What prm.training.train_prm hands to prm.models.resolve_model: PRMTrainConfig.base_model.
    assert PRMTrainAssetConfig(**ops["prm_model"]["config"]).to_library().base_model == name
    assert ops["label_source_comparison"]["config"]["train"]["base_model"] == name


def test_the_dry_run_names_the_backbone_the_prm_job_trains() -> None:
    lines, problems = model_report(parse_recipe({"prm": {"base_model": "org/backbone"}}))
    assert problems == [] and any(line.startswith("PRM backbone") and "'org/backbone'" in line for line in lines)
