"""``prm.models.local_model``: the one rule that turns what a user passes as ``--prm`` into a folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prm.models import ARITH_PRM_NAME, POINTER, VERSIONS, local_model
from prm.models.constants import SHIPPED_PRM_DIR


def _model(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"model_type": "llama"}))
    return folder


def test_a_folder_is_itself_and_a_shipped_name_is_its_checked_folder(tmp_path: Path) -> None:
    folder = _model(tmp_path / "mine")
    assert local_model(folder) == folder
    assert local_model(str(folder)) == folder
    assert local_model(ARITH_PRM_NAME) == SHIPPED_PRM_DIR


def test_a_prm_root_resolves_to_the_version_its_pointer_names(tmp_path: Path) -> None:
    root = tmp_path / "prm"
    _model(root / VERSIONS / "prm-aaaa")
    newest = _model(root / VERSIONS / "prm-bbbb")
    (root / POINTER).write_text("prm-bbbb\n")
    assert local_model(root) == newest
    (root / POINTER).write_text("../../etc\n")
    with pytest.raises(ValueError, match="does not name a version folder"):
        local_model(root)


def test_a_missing_path_is_returned_for_the_callers_error_and_a_typo_is_not_a_hub_id(tmp_path: Path) -> None:
    assert local_model(tmp_path / "nowhere") == tmp_path / "nowhere"
    assert local_model("arith-prm-typo") == Path("arith-prm-typo")


def test_an_unreachable_hub_id_says_how_to_fetch_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    with pytest.raises(FileNotFoundError, match="huggingface-cli download nobody/no-such-prm"):
        local_model("nobody/no-such-prm")


def test_trained_is_the_prm_model_assets_newest_version_under_the_model_cache(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from prm.models import trained_root
    from prm.models.constants import MODEL_CACHE_ENV

    monkeypatch.setenv(MODEL_CACHE_ENV, str(tmp_path / "cache"))
    with pytest.raises(FileNotFoundError, match="materialize prm_model first"):
        local_model("trained")
    newest = _model(trained_root() / VERSIONS / "prm-cccc")
    (trained_root() / POINTER).write_text("prm-cccc\n")
    assert trained_root() == tmp_path / "cache" / "prm" and local_model("trained") == newest
