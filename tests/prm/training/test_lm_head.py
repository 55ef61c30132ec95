"""The LM-head PRM through train_prm: it learns, its card, load_prm scores it, seeds, and folder hygiene."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prm.format import CONVENTION_FILE
from prm.implicit_recipe import IMPLICIT_CONFIG_FILE
from prm.scoring import load_prm
from prm.scoring.implicit_scorer import ImplicitPRMScorer
from prm.training import PRMTrainConfig, read_prm_card, train_prm
from prm.training.constants import MANIFEST_FILE
from prm.training.lm_head import reference_of
from tests.prm.training.test_trainer import learnable_rows, tiny


def lm(base: Path, **overrides) -> PRMTrainConfig:
    # No reference floor: the tiny base is random, every token below any floor (tests/prm/training/test_off_policy.py
    # tests the floor on the shipped policy, a reference that has learned its text).
    return PRMTrainConfig(**{**tiny(base, max_steps=30, learning_rate=3e-2).to_dict(), "head": "lm",
                             "ref_floor": None, **overrides})


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    return learnable_rows(24, "train", 0) + learnable_rows(8, "val", 1) + learnable_rows(4, "test", 2)


@pytest.fixture(scope="module")
def folder(tiny_base: Path, rows: list[dict], tmp_path_factory: pytest.TempPathFactory) -> Path:
    return train_prm(rows, tmp_path_factory.mktemp("lm") / "prm", lm(tiny_base))


def test_it_learns_and_its_card_says_what_it_is(folder: Path, tiny_base: Path) -> None:
    card = read_prm_card(folder)
    assert card["head"] == "lm" and card["reference"] == str(tiny_base) and card["convention"] is None
    assert card["rows"] == {"train": 24, "val": 8} and card["test_rows_unused"] == 4
    losses = [loss for _, loss in card["loss_history"]]
    assert losses[-1] < losses[0] / 2  # "ok" vs "no" is learnable in 30 steps
    assert card["final_metrics"]["eval_step_auc"] > 0.9  # held-out rows of the same pattern
    assert (folder / IMPLICIT_CONFIG_FILE).is_file() and not (folder / CONVENTION_FILE).exists()


def test_load_prm_scores_it_as_a_prm(folder: Path) -> None:
    scorer = load_prm(folder)
    assert isinstance(scorer, ImplicitPRMScorer)
    good, bad = scorer.score_steps("7 plus 1", ["ok"])[0], scorer.score_steps("7 plus 1", ["no"])[0]
    assert good > 0.5 > bad
    assert scorer.score_batch([("q", []), ("7 plus 1", ["ok", "no"])])[0] == []


def test_a_fixed_seed_repeats_and_another_changes(folder: Path, tiny_base: Path, rows: list[dict],
                                                  tmp_path: Path) -> None:
    def scores(path: Path) -> list[float]:
        return load_prm(path).score_steps("3 plus 1", ["ok", "no", "ok"])

    again = train_prm(rows, tmp_path / "again", lm(tiny_base))
    other = train_prm(rows, tmp_path / "other", lm(tiny_base, seed=1))
    assert scores(again) == scores(folder)
    assert scores(other) != scores(folder)


def test_heads_overwrite_each_other_cleanly(tiny_base: Path, rows: list[dict], tmp_path: Path) -> None:
    out = tmp_path / "prm"
    train_prm(rows, out, lm(tiny_base, max_steps=2))
    train_prm(rows, out, tiny(tiny_base, max_steps=2))  # a classification head over the LM head's folder
    assert not (out / IMPLICIT_CONFIG_FILE).exists() and not isinstance(load_prm(out), ImplicitPRMScorer)
    train_prm(rows, out, lm(tiny_base, max_steps=2))
    assert not (out / CONVENTION_FILE).exists() and isinstance(load_prm(out), ImplicitPRMScorer)


def test_an_earlier_models_files_are_gone_and_change_no_score(folder: Path, tiny_base: Path, rows: list[dict],
                                                              tmp_path: Path) -> None:
    # The demo once saved the char-level PRM over a SmolLM2 PRM's folder: its chat_template.jinja stayed, the
    # tokenizer loaded it, and every score changed while the weights' digest did not. An earlier save's files are
    # those its manifest lists: here a SmolLM2 save's template and shard index.
    out = tmp_path / "prm"
    train_prm(rows, out, lm(tiny_base, max_steps=1))
    (out / "chat_template.jinja").write_text("<|im_start|>{{ messages[0]['content'] }}")
    (out / "model.safetensors.index.json").write_text("{}")
    manifest = json.loads((out / MANIFEST_FILE).read_text())
    manifest["files"] += ["chat_template.jinja", "model.safetensors.index.json"]
    (out / MANIFEST_FILE).write_text(json.dumps(manifest))
    (out / "checkpoints").mkdir()  # subfolders (a resume's checkpoints) stay
    train_prm(rows, out, lm(tiny_base))
    assert not (out / "chat_template.jinja").exists() and not (out / "model.safetensors.index.json").exists()
    assert (out / "checkpoints").is_dir()
    steps = ["ok", "no", "ok"]
    assert load_prm(out).score_steps("3 plus 1", steps) == load_prm(folder).score_steps("3 plus 1", steps)


def test_a_folder_of_other_files_is_refused_before_training(tiny_base: Path, rows: list[dict],
                                                            tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match=r"holds files train_prm did not write \(notes.txt\)"):
        train_prm(rows, tmp_path, lm(tiny_base, max_steps=1))
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_a_warm_start_keeps_the_parents_reference(folder: Path, tiny_base: Path) -> None:
    assert reference_of(str(folder)) == str(tiny_base)  # not the parent: its log-ratios would start at 0
    assert reference_of(str(tiny_base)) == str(tiny_base)
    recipe = json.loads((folder / IMPLICIT_CONFIG_FILE).read_text())
    assert recipe["labels"] == "step" and recipe["reference"] == str(tiny_base)


def test_it_refuses_resume_and_one_class_rows(tiny_base: Path, rows: list[dict], tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="keeps no checkpoints"):
        train_prm(rows, tmp_path / "a", lm(tiny_base), resume=True)
    good = [{**r, "labels": [True] * len(r["labels"])} for r in rows]
    with pytest.raises(ValueError, match=r"all \d+ step labels are good"):
        train_prm(good, tmp_path / "b", lm(tiny_base))
