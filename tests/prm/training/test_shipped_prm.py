"""The shipped PRM (prm/training/shipped/arith-prm): its card holds the recipe's goals, and a tampered card or
checkpoint is refused, as the shipped policy's are."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from prm.training import PRMTrainConfig
from prm.training.ship import SHIPPED_PRM_DIR, ShippedRecipe, figures, figures_markdown, verify_shipped_prm


def test_the_shipped_prm_matches_its_card_and_meets_the_recipe_goals() -> None:
    entry = verify_shipped_prm(SHIPPED_PRM_DIR)  # raises on a digest mismatch
    assert entry["recipe"] == ShippedRecipe().to_dict()  # built by today's recipe and PRMTrainConfig defaults
    assert entry["recipe"]["train"] == PRMTrainConfig(eval_steps=10_000, save_steps=10_000).to_dict()
    test = entry["figures"]["in_distribution"]
    assert test["prm"]["f1"]["value"] >= 0.9 > test["constant"]["f1"]["value"]
    assert test["prm"]["step_sensitivity"]["value"] >= 0.9
    assert test["prm"]["worst_detection"]["value"] >= 0.95
    assert test["prm"]["bon_gain"]["value"] > test["constant"]["bon_gain"]["value"]


def _copy(tmp_path: Path) -> Path:
    copy = tmp_path / "arith-prm"
    shutil.copytree(SHIPPED_PRM_DIR, copy)
    return copy


def test_a_tampered_shipped_checkpoint_is_refused(tmp_path: Path) -> None:
    copy = _copy(tmp_path)
    weights = copy / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[len(data) // 2] ^= 0xFF  # the middle of the file: a digest of its ends would miss it
    weights.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=r"do not match the digests.*make prm"):
        verify_shipped_prm(copy)


def test_a_tampered_or_missing_shipped_card_is_refused(tmp_path: Path) -> None:
    copy = _copy(tmp_path)
    card = json.loads((copy / "prm_card.json").read_text())
    card["shipped"]["weights_sha256"]["model.safetensors"] = "0" * 64
    (copy / "prm_card.json").write_text(json.dumps(card))
    with pytest.raises(ValueError, match="do not match the digests"):
        verify_shipped_prm(copy)
    (copy / "prm_card.json").write_text("{not json")
    with pytest.raises(ValueError, match=r"no readable shipped-PRM card.*make prm"):
        verify_shipped_prm(copy)


def test_figures_pick_the_prm_and_the_constant_baseline_and_the_worst_kind() -> None:
    rows = [{"model": "m", "split": "t", "metric": "bon_gain@4", "value": 0.1, "detail_json": '{"ci": [0.0, 0.2]}'},
            {"model": "baseline:constant", "split": "t", "metric": "bon_gain@4", "value": -0.1, "detail_json": None},
            {"model": "m", "split": "t", "metric": "perturbation:nonsense", "value": 1.0, "detail_json": None},
            {"model": "m", "split": "t", "metric": "perturbation:slip_small", "value": 0.7, "detail_json": None},
            {"model": "other", "split": "t", "metric": "bon_gain@4", "value": 0.9, "detail_json": None}]
    got = figures(rows, "m")["t"]
    assert got["prm"]["bon_gain"] == {"value": 0.1, "ci": [0.0, 0.2]}
    assert got["constant"]["bon_gain"]["value"] == -0.1
    assert got["prm"]["worst_detection"]["kind"] == "slip_small"
    table = figures_markdown({"t": got})
    assert "0.100 [0.000, 0.200]" in table and "-0.100" in table and "0.700 (slip_small)" in table
