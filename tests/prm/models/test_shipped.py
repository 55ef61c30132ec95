"""The shipped models, by name: one folder ``prm/shipped/<name>`` per registry entry, and every loader takes the
name (resolve_model, load_prm)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from prm.models import ARITH_PRM_NAME, REGISTERED_MODELS, SHIPPED_MODELS, SHIPPED_PRM_DIR, resolve_model
from prm.models.constants import SHIPPED_ROOT
from prm.scoring import ImplicitPRMScorer, ScorerConfig, load_prm

ROOT = Path(__file__).resolve().parents[3]


def test_every_shipped_folder_is_registered_and_every_entry_has_its_folder() -> None:
    assert SHIPPED_ROOT == ROOT / "prm" / "shipped"
    folders = {p.name for p in SHIPPED_ROOT.iterdir() if p.is_dir() and not p.name.startswith((".", "__"))}
    assert folders == set(SHIPPED_MODELS) == {"arith-policy", "smollm2-judge", "arith-prm"}
    assert {m.kind for m in SHIPPED_MODELS.values()} == {"policy", "judge", "prm"}
    for name, model in SHIPPED_MODELS.items():
        assert model.folder == SHIPPED_ROOT / name and name in REGISTERED_MODELS
        assert f"prm/shipped/{name}" in (ROOT / "Makefile").read_text()  # its make target rebuilds it in place


def test_the_shipped_prm_resolves_by_name_after_its_card_check() -> None:
    assert resolve_model(ARITH_PRM_NAME) == SHIPPED_PRM_DIR


def test_load_prm_takes_the_shipped_prms_name() -> None:
    by_name = load_prm(ARITH_PRM_NAME, ScorerConfig(device="cpu", dtype="float32"))
    assert isinstance(by_name, ImplicitPRMScorer) and by_name.folder == SHIPPED_PRM_DIR
    items = [("What is 2 + 3?", ["2 + 3 = 5", "The answer is 5"])]
    by_path = load_prm(SHIPPED_PRM_DIR, ScorerConfig(device="cpu", dtype="float32"))
    assert by_name.score_batch(items) == by_path.score_batch(items)


def test_a_local_folder_of_the_same_name_wins_over_the_shipped_one(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    shutil.copytree(SHIPPED_PRM_DIR, tmp_path / ARITH_PRM_NAME)
    assert load_prm(ARITH_PRM_NAME, ScorerConfig(device="cpu")).folder == Path(ARITH_PRM_NAME)


def test_a_tampered_copy_of_the_shipped_prm_is_refused_naming_the_file(tmp_path: Path) -> None:
    from prm.models.shipped import check_shipped_prm_files

    copy = shutil.copytree(SHIPPED_PRM_DIR, tmp_path / ARITH_PRM_NAME)
    assert check_shipped_prm_files(copy) == copy
    (copy / "implicit_prm.json").write_text((copy / "implicit_prm.json").read_text().replace('"beta": 0.5',
                                                                                             '"beta": 5.0'))
    with pytest.raises(ValueError, match=r"implicit_prm\.json changed or missing.*git checkout -- prm/shipped/arith-prm"
                       ):
        check_shipped_prm_files(copy)
