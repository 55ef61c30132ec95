"""PRMArtifacts: each training in its own version folder, ``LATEST`` naming the newest, a pre-versioning
``model/`` folder still readable, and a malformed pointer one clear error (issue 49 item 5).

Fast: model folders are config.json plus a weights file (what the version digest reads); no training."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prm.models import weights_digest
from prm.training import PRMArtifacts


def _weights(folder: Path, seed: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps({"model_type": "llama", "hidden_size": 8}))
    (folder / "model.safetensors").write_bytes(bytes([seed]) * 64)
    return folder


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_each_training_gets_its_own_folder_and_latest_names_the_newest(tmp_path: Path) -> None:
    art = PRMArtifacts(tmp_path / "prm")
    with pytest.raises(FileNotFoundError, match="materialize prm_model first"):
        art.trained_model()
    first = art.new_model(lambda out: _weights(out, 1))
    with pytest.raises(FileNotFoundError):  # built, not yet published: readers never see an unregistered one
        art.trained_model()
    art.publish(first)
    before = _files(first)
    second = art.new_model(lambda out: _weights(out, 2))
    art.publish(second)
    assert art.trained_model() == second != first
    assert (first.name, second.name) == (f"prm-{weights_digest(first)}", f"prm-{weights_digest(second)}")
    assert _files(first) == before  # the earlier version's bytes are untouched
    assert art.pointer.read_text() == second.name + "\n"
    again = art.new_model(lambda out: _weights(out, 1))  # the same weights again: the existing folder, kept
    assert again == first and _files(first) == before
    assert sorted(p.name for p in art.versions.iterdir()) == sorted([first.name, second.name])  # no leftovers


def test_a_model_folder_from_before_versioned_folders_stays_readable_until_a_training_publishes(
        tmp_path: Path) -> None:
    art = PRMArtifacts(tmp_path / "prm")
    legacy = _weights(art.root / "model", 3)
    assert art.trained_model() == legacy
    newer = art.new_model(lambda out: _weights(out, 4))
    art.publish(newer)
    assert art.trained_model() == newer and (legacy / "model.safetensors").read_bytes()[0] == 3


@pytest.mark.parametrize(("pointer", "match"), [
    (b"", "does not name a version folder"),
    (b"../model\n", "does not name a version folder"),
    (b"prm-abc/../../x", "does not name a version folder"),
    (b"..", "does not name a version folder"),
    (b"x" * 10_000, "does not name a version folder"),
    (b"\xff\xfe", "does not name a version folder"),
    (b"prm-a\nprm-b", "does not name a version folder"),
    (b"prm-000000000000\n", r"names prm-000000000000, but .* holds no model"),
])
def test_a_malformed_pointer_is_one_clear_error(tmp_path: Path, pointer: bytes, match: str) -> None:
    art = PRMArtifacts(tmp_path / "prm")
    _weights(art.root / "model", 3)  # a legacy folder is no fallback for a broken pointer: that would hide it
    art.pointer.write_bytes(pointer)
    with pytest.raises(ValueError, match=match):
        art.trained_model()


def test_publish_takes_only_a_finished_version_folder(tmp_path: Path) -> None:
    art = PRMArtifacts(tmp_path / "prm")
    with pytest.raises(ValueError, match="is not a version folder"):
        art.publish(_weights(tmp_path / "elsewhere", 1))
    with pytest.raises(FileNotFoundError, match="holds no model"):
        art.publish(art.versions / "prm-000000000000")
    assert not art.pointer.exists()
