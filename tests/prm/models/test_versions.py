"""A model's version (the registry's ``version``, ``model_version``'s hex) digests every file that changes its scores
and the reference an LM-head PRM is read against, and nothing else: a card written after training keeps it."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from prm.implicit_recipe import IMPLICIT_CONFIG_FILE
from prm.models import check_score_files, model_version, score_digests, weights_digest
from prm.models.constants import SHIPPED_POLICY_DIR
from prm.models.versions import RECIPE_FILE, score_changes, score_version


def _prm(folder: Path, reference: str) -> Path:
    """A stand-in LM-head PRM folder (the digest reads bytes, never loads them) read against ``reference``."""
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"model_type": "llama", "rms_norm_eps": 1e-6}))
    (folder / "model.safetensors").write_bytes(b"\x01" * 256)
    (folder / "tokenizer.json").write_text(json.dumps({"model": {"vocab": {"+": 16, "-": 18}}}))
    (folder / "tokenizer_config.json").write_text(json.dumps({"model_max_length": 1024}))
    (folder / RECIPE_FILE).write_text(json.dumps({"reference": reference, "beta": 0.5}))
    return folder


# Each changes the scores the folder gives, so each is a new version.
SCORE_CHANGES: list[tuple[str, Callable[[Path], object]]] = [
    ("tokenizer", lambda f: (f / "tokenizer.json").write_text(json.dumps({"model": {"vocab": {"+": 18, "-": 16}}}))),
    ("chat template", lambda f: (f / "tokenizer_config.json").write_text(json.dumps({"chat_template": "{{ x }}"}))),
    ("chat template file", lambda f: (f / "chat_template.jinja").write_text("{{ x }}")),
    ("config", lambda f: (f / "config.json").write_text(json.dumps({"model_type": "llama", "rms_norm_eps": 1e-2}))),
    ("generation config", lambda f: (f / "generation_config.json").write_text(json.dumps({"temperature": 0.1}))),
    ("recipe", lambda f: (f / RECIPE_FILE).write_text(json.dumps({"reference": str(SHIPPED_POLICY_DIR), "beta": 5}))),
    ("convention", lambda f: (f / "prm_convention.json").write_text(json.dumps({"name": "x", "step_tag": "\n"}))),
    ("weights", lambda f: (f / "model.safetensors").write_bytes(b"\x01" * 255 + b"\x02")),
    ("custom code", lambda f: (f / "modeling_prm.py").write_text("x = 1\n")),
]


@pytest.mark.parametrize("change", [c for _, c in SCORE_CHANGES], ids=[n for n, _ in SCORE_CHANGES])
def test_every_file_that_changes_a_score_changes_the_version(tmp_path: Path, change: Callable[[Path], object]) -> None:
    folder = _prm(tmp_path / "prm", str(SHIPPED_POLICY_DIR))
    before = weights_digest(folder)
    change(folder)
    assert weights_digest(folder) != before
    assert model_version(folder) == f"{folder}@{weights_digest(folder)}"


def test_a_card_or_readme_written_after_training_keeps_the_version(tmp_path: Path) -> None:
    folder = _prm(tmp_path / "prm", str(SHIPPED_POLICY_DIR))
    before = weights_digest(folder)
    (folder / "prm_card.json").write_text(json.dumps({"figures": {"f1": 0.9}}))
    (folder / "README.md").write_text("# a PRM\n")
    assert weights_digest(folder) == before


def test_a_reference_rebuilt_with_one_weight_changed_is_a_new_version(tmp_path: Path) -> None:
    policy = Path(shutil.copytree(SHIPPED_POLICY_DIR, tmp_path / "policy"))
    folder = _prm(tmp_path / "prm", str(policy))
    before = score_digests(folder)
    assert before["reference"] == f"{policy}@{weights_digest(policy)}"
    weights = policy / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[len(data) // 2] ^= 0x01  # one bit of one weight
    weights.write_bytes(bytes(data))
    after = score_digests(folder)
    assert after["reference"] != before["reference"] and score_version(after) != score_version(before)
    with pytest.raises(ValueError, match=r"the reference is now '.*policy@\w+', not '.*policy@\w+'.*restore it"):
        check_score_files(folder, before, fix="restore it")
    (policy / "tokenizer.json").write_text("{}")  # the reference's tokenizer is part of its identity too
    assert score_digests(folder)["reference"] != after["reference"]


def test_a_reference_that_does_not_resolve_or_is_the_prm_itself_is_recorded_not_followed(tmp_path: Path) -> None:
    missing = _prm(tmp_path / "missing", str(tmp_path / "nowhere"))
    assert score_digests(missing)["reference"].endswith("(does not resolve)")
    itself = _prm(tmp_path / "itself", str(tmp_path / "itself"))
    assert score_digests(itself)["reference"].endswith("(the PRM itself)")
    hub = _prm(tmp_path / "hub", "org/reference-model")
    assert score_digests(hub)["reference"] == "org/reference-model"  # pin a revision in the id to version it


def test_the_check_names_every_file_that_changed(tmp_path: Path) -> None:
    folder = _prm(tmp_path / "prm", str(SHIPPED_POLICY_DIR))
    declared = score_digests(folder)
    assert check_score_files(folder, declared, fix="x") == declared
    (folder / "tokenizer_config.json").unlink()
    (folder / "chat_template.jinja").write_text("{{ x }}")
    with pytest.raises(ValueError, match=r"chat_template\.jinja was added; tokenizer_config\.json is missing"):
        check_score_files(folder, declared, fix="x")
    for malformed in (None, [], {"files": {}}, {"files": {"config.json": 1}}, {"files": {"a": "b"}, "reference": 3}):
        with pytest.raises(ValueError, match="records no digests"):
            check_score_files(folder, malformed, fix="x")
    assert score_changes(declared, declared) == []


def test_the_recipe_file_digested_is_the_one_scoring_reads() -> None:
    assert RECIPE_FILE == IMPLICIT_CONFIG_FILE
