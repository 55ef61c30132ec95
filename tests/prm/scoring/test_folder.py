"""A PRM folder whose prm_convention.json or config.json is broken fails at load with the file and the fix."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from prm.scoring import ScorerConfig, load_prm

CONFIG = ScorerConfig(device="cpu", torch_threads=1)


@pytest.fixture
def folder(prm_folders: dict[str, Path], tmp_path: Path) -> Path:
    return shutil.copytree(prm_folders["prm-pipeline"], tmp_path / "prm")


@pytest.mark.parametrize("text,match", [
    ("{oops", r"prm_convention\.json:1: not JSON \(.*\); rewrite it with StepTagConvention\(\.\.\.\)\.save"),
    ("[1]", r"prm_convention\.json: an array, not a JSON object; rewrite it"),
    (json.dumps({"name": "mine"}), r"prm_convention\.json: missing or empty \['step_tag', 'head'\]"),
    (json.dumps({"name": "mine", "step_tag": "\n", "head": 2}), r"prm_convention\.json: missing or empty \['head'\]"),
    (json.dumps({"name": "mine", "step_tag": "\n", "head": "regression"}),
     r"prm_convention\.json: head='regression' must be one of .*; rewrite it"),
])
def test_a_broken_convention_file_is_named_with_the_fix(folder: Path, text: str, match: str) -> None:
    (folder / "prm_convention.json").write_text(text)
    with pytest.raises(ValueError, match=match):
        load_prm(folder, CONFIG)


@pytest.mark.parametrize("edit,match", [
    ({"num_labels": 3}, r"config\.json: num_labels gives 3 classes, but a token-classification PRM head has 2"),
    ({"id2label": {"0": "a", "1": "b", "2": "c"}, "label2id": {"a": 0, "b": 1, "c": 2}},
     r"config\.json: id2label gives 3 classes, but a token-classification PRM head has 2 \(0 = bad, 1 = good\)"),
])
def test_a_head_without_two_labels_is_refused_at_load(folder: Path, edit: dict, match: str) -> None:
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps(config | edit))
    with pytest.raises(ValueError, match=match):
        load_prm(folder, CONFIG)


def test_a_config_that_is_not_json_is_named(folder: Path) -> None:
    (folder / "config.json").write_text("{")
    with pytest.raises(ValueError, match=r"config\.json:1: not JSON .*restore the model folder's config\.json"):
        load_prm(folder, CONFIG)


def test_a_head_in_the_folders_own_code_is_not_held_to_num_labels(prm_folders: dict[str, Path], tmp_path: Path) -> None:
    # Qwen2.5-Math-PRM's head code has 2 outputs whatever its config says (vLLM forces num_labels = 2 for it).
    folder = shutil.copytree(prm_folders["qwen2.5-math-prm"], tmp_path / "qwen")
    config = json.loads((folder / "config.json").read_text())
    config |= {"num_labels": 1, "auto_map": {"AutoModel": "modeling_qwen2_rm.Qwen2ForProcessRewardModel"}}
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match="custom code"):  # the next check, not the label count
        load_prm(folder, CONFIG)
