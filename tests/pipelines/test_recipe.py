"""The recipe schema: shipped recipes validate against the jobs' real config schemas, dry runs load no model, bad
recipes fail with what, why and what to do, and the recipe's policy is followed by the PRM, RL, search and flywheel."""

from __future__ import annotations

import shutil
import subprocess
import tomllib
from pathlib import Path

import dagster as dg
import pytest
from click.testing import CliRunner

from pipelines.cli import main
from pipelines.definitions import defs
from pipelines.recipe import JOBS, RecipeError, apply_override, dump_recipe, load_recipe, parse_recipe
from pipelines.run_config import recipe_run_config, recipe_selection
from prm.search.__main__ import policy_of
from warehouse.config import PROJECT_ROOT
from warehouse.methods import COMPARED_METHODS

RECIPES = sorted((PROJECT_ROOT / "recipes").rglob("*.yaml"))
DATA = PROJECT_ROOT.parent / "shared" / "data"


# Where a recipe names a hub dataset, the tests read the same split from ../shared (nothing is downloaded here).
HUB_COPIES = {("openai/gsm8k", "main", "train"): DATA / "gsm8k" / "train.jsonl",
              ("HuggingFaceH4/MATH-500", None, "test"): DATA / "math500" / "test.jsonl"}


def _needs_data(recipe: Path, cache: Path) -> None:
    """Skip when the recipe's data is absent; a hub dataset's split is put where prm.datagen.hub_file keeps its
    download (``cache``: the model cache), from ../shared, as if it had been downloaded once."""
    spec = load_recipe(recipe).dataset
    if spec.hub is not None:
        copy = HUB_COPIES[(spec.hub, spec.config, spec.split)]
        if not copy.exists():
            pytest.skip(f"{copy} is absent (../shared/data), and a hub dataset is not downloaded in tests")
        target = cache / "datasets" / spec.hub / (spec.config or "default") / f"{spec.split}.jsonl"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(copy.read_bytes())
        return
    path = spec.file()
    if path is not None and not path.exists():
        pytest.skip(f"{path} is absent")


@pytest.mark.parametrize("recipe", RECIPES, ids=lambda p: str(p.relative_to(PROJECT_ROOT / "recipes")))
def test_every_shipped_recipe_is_a_valid_run_config_of_every_job(recipe: Path) -> None:
    loaded = load_recipe(recipe)
    for job in JOBS:
        result = dg.validate_run_config(defs.resolve_job_def(job), recipe_run_config(loaded, job))
        assert result is not None
    assert load_recipe(recipe) == parse_recipe(load_recipe(recipe).to_dict())  # round trip


@pytest.mark.parametrize("recipe", RECIPES, ids=lambda p: str(p.relative_to(PROJECT_ROOT / "recipes")))
def test_a_dry_run_validates_without_loading_any_model(recipe: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PRM_MODEL_CACHE", str(tmp_path / "models"))
    _needs_data(recipe, tmp_path / "models")
    monkeypatch.setenv("PRM_INBOX", str(tmp_path / "inbox"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    result = CliRunner().invoke(main, ["run", str(recipe), "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "is valid" in result.output and '"prm_model"' in result.output
    models = tmp_path / "models"
    assert not models.exists() or {p.name for p in models.iterdir()} <= {"datasets"}  # no model converted
    assert not (tmp_path / "inbox").exists()  # a dry run stages nothing
    if "gpu" in recipe.parts:
        assert "hub id 'Qwen/Qwen2.5-Math-1.5B-Instruct': not loaded by a dry run" in result.output
        assert "500 problems with a gold answer" in result.output


def test_the_default_recipe_is_the_demo() -> None:
    recipe = load_recipe(PROJECT_ROOT / "recipes" / "default.yaml")
    prm = recipe_run_config(recipe, "prm")["ops"]
    assert prm["prm_model"]["config"] == {"base_model": "arith-policy", "max_steps": 40}
    assert prm["label_source_comparison"]["config"]["methods"] == list(COMPARED_METHODS)
    assert recipe.source == "arith" and recipe.rl.run and recipe_selection(recipe, "refresh") is None
    assert recipe_run_config(recipe, "refresh")["ops"] == {}  # the assets' own defaults


def test_the_recipe_policy_is_followed_by_the_prm_rl_search_and_flywheel() -> None:
    recipe = parse_recipe({"policy": {"model": "org/model"}, "dataset": {"source": "mine"}})
    assert recipe_run_config(recipe, "refresh")["resources"]["generation"]["config"]["model"] == "org/model"
    assert recipe_run_config(recipe, "prm")["ops"]["prm_model"]["config"]["base_model"] == "org/model"
    assert recipe_run_config(recipe, "rl")["ops"]["rl_run"]["config"] == {"policy": "org/model", "source": "mine"}
    search = recipe_run_config(recipe, "search")
    assert search["resources"]["generation"]["config"]["model"] == "org/model"
    assert search["ops"]["search_comparison"]["config"] == {"source": "mine"}  # its own held-out problems
    assert recipe_run_config(recipe, "flywheel")["resources"]["flywheel"]["config"]["policy"] == "org/model"
    # Each can still be set apart.
    apart = parse_recipe({"policy": {"model": "org/model"}, "prm": {"base_model": "org/big"},
                          "rl": {"policy": "org/rl"}, "search": {"policy": "org/s"}})
    assert recipe_run_config(apart, "prm")["ops"]["prm_model"]["config"]["base_model"] == "org/big"
    assert recipe_run_config(apart, "rl")["ops"]["rl_run"]["config"]["policy"] == "org/rl"
    assert recipe_run_config(apart, "search")["resources"]["generation"]["config"]["model"] == "org/s"


def test_search_defaults_to_the_policy_the_prm_was_initialised_from(tmp_path: Path) -> None:
    (tmp_path / "prm_card.json").write_text('{"base_model": "smollm2-135m-instruct"}')
    assert policy_of(tmp_path) == "smollm2-135m-instruct"
    assert policy_of(tmp_path / "no-card") == "arith-policy"


def test_the_recipe_prompt_and_sampling_reach_the_solutions_and_rollouts() -> None:
    recipe = parse_recipe({"prompt": {"system_prompt": "Be exact.", "instruction": "End with 'The answer is: X'."},
                           "sampling": {"n": 3, "temperature": 0.7, "top_p": 0.9, "stop": ["\n####"],
                                        "max_tokens": 200}, "labels": {"rollouts": 5}})
    ops = recipe_run_config(recipe, "refresh")["ops"]
    assert ops["solutions"]["config"] == {"n_samples": 3, "temperature": 0.7, "top_p": 0.9, "stop": ["\n####"],
                                          "max_tokens": 200, "system_prompt": "Be exact.",
                                          "instruction": "End with 'The answer is: X'."}
    assert ops["rollouts"]["config"]["n_rollouts"] == 5 and ops["rollouts"]["config"]["temperature"] == 0.7
    assert ops["mc_labels"]["config"]["n_rollouts"] == 5
    formal = parse_recipe({"labels": {"methods": ["formal"]}, "prm": {"label_method": "sympy"}})
    assert recipe_selection(formal, "refresh") == ["problems", "solutions", "formal_verifications"]


@pytest.mark.parametrize("data,message", [
    ({"sampling": {"temprature": 0.7}}, "sampling.temprature is not a recipe field; sampling takes"),
    ({"sampler": {}}, "sampler is not a recipe section"),
    ({"sampling": {"n": "two"}}, "sampling.n is 'two', a str; give a whole number"),
    ({"sampling": {"n": 0}}, "sampling.n=0 must be in [1, 4096] (solutions per problem"),
    ({"sampling": {"top_p": 1.5}}, "sampling.top_p=1.5 must be in (0, 1]"),
    ({"sampling": {"temperature": True}}, "(a boolean); give a number"),
    ({"labels": {"methods": ["mc", "sympy"]}}, "labels.methods ['sympy'] are not labelers"),
    ({"labels": {"methods": ["mc"]}}, "prm.label_method 'omegaprm' trains on labels no labeler"),
    ({"labels": {"methods": ["omegaprm", "progress"]}}, "progress labels are computed from the MC labels' rollouts"),
    ({"prm": {"head": "mlp"}}, "prm.head 'mlp' is unknown"),
    ({"dataset": {"source": "arith", "path": "x.jsonl"}}, "is a built-in generator and reads no file"),
    ({"dataset": {"source": "a/b"}}, "cannot name a partition"),
    ({"dataset": {"path": "x.jsonl", "fields": {"query": "q"}}}, "dataset.fields maps 'query'"),
    ({"prompt": "Be exact."}, "prompt must be a mapping of its fields"),
])
def test_a_bad_recipe_says_what_and_what_to_do(data: dict, message: str) -> None:
    with pytest.raises(RecipeError, match="recipe") as info:
        parse_recipe(data)
    assert message in str(info.value)


def test_overrides_read_values_as_yaml_and_keep_text_with_colons() -> None:
    data = apply_override(apply_override({}, "sampling.n=2"), "labels.methods=[mc, omegaprm]")
    data = apply_override(data, "prompt.instruction=End with: The answer is: X")
    assert data == {"sampling": {"n": 2}, "labels": {"methods": ["mc", "omegaprm"]},
                    "prompt": {"instruction": "End with: The answer is: X"}}
    with pytest.raises(RecipeError, match=r"write section\.field=value"):
        apply_override({}, "sampling.n")


def test_the_cli_refuses_a_bad_recipe_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "r.yaml"
    path.write_text("sampling:\n  n: 2\n")
    result = CliRunner().invoke(main, ["run", str(path), "--set", "sampling.top_p=2", "--dry-run"])
    assert result.exit_code == 1
    assert result.output.startswith("Error: recipe ") and "top_p" in result.output and "Traceback" not in result.output
    missing = CliRunner().invoke(main, ["run", str(tmp_path / "nope.yaml"), "--dry-run"])
    assert missing.exit_code == 1 and "does not exist" in missing.output


def test_a_recipe_dumps_and_loads_back(tmp_path: Path) -> None:
    recipe = parse_recipe({"name": "x", "dataset": {"path": "d.jsonl", "fields": {"question": "prompt"}},
                           "sampling": {"stop": ["\n\n"]}})
    path = tmp_path / "x.yaml"
    path.write_text(dump_recipe(recipe))
    assert load_recipe(path) == recipe


def test_every_cli_command_has_an_example() -> None:
    for name, command in main.commands.items():
        assert "Example:" in (command.help or ""), name


def test_the_console_script_and_make_run_call_the_cli() -> None:
    scripts = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["prm-pipeline"] == "pipelines.cli:main"
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    args = ["RECIPE=recipes/smollm2-gsm8k.yaml", "SET=sampling.n=2 dataset.limit=8"]
    plan = subprocess.run(["make", "-n", "run", *args], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=60)
    assert plan.returncode == 0, plan.stderr
    assert "-m pipelines.cli run recipes/smollm2-gsm8k.yaml --set sampling.n=2 --set dataset.limit=8" in plan.stdout


def test_a_hub_dataset_offline_fails_the_dry_run_in_one_line_that_says_what_to_do(tmp_path: Path,
                                                                                   monkeypatch: pytest.MonkeyPatch):
    import datasets
    import huggingface_hub

    monkeypatch.setenv("PRM_MODEL_CACHE", str(tmp_path / "models"))
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)  # HF_HUB_OFFLINE=1, as read at import
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    recipe = tmp_path / "hub.yaml"
    recipe.write_text("dataset: {hub: openai/gsm8k, config: main, split: test, limit: 4}\n")
    result = CliRunner().invoke(main, ["run", str(recipe), "--dry-run"])
    assert result.exit_code == 1
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "cannot load the hub dataset 'openai/gsm8k'" in errors[0]
    assert "set dataset.path to a local .jsonl/.parquet file" in errors[0] and "Traceback" not in result.output
