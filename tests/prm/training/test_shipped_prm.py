"""The shipped PRM (prm/shipped/arith-prm): its card holds the recipe's goals, and a tampered card, a
tampered file of any kind that changes a score (weights, tokenizer, config, recipe) or a rebuilt reference policy is
refused, naming what changed."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from prm.models import weights_digest
from prm.models.constants import MODEL_CACHE_ENV, SHIPPED_POLICY_DIR
from prm.policy import weight_digests
from prm.training import PRMTrainConfig
from prm.training.ship import (
    SHIPPED_PRM_DIR,
    ShippedRecipe,
    figures,
    figures_markdown,
    reseal_shipped_card,
    verify_shipped_prm,
)


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


def _edit_json(name: str, edit: Callable[[dict], None]) -> Callable[[Path], None]:
    def tamper(folder: Path) -> None:
        data = json.loads((folder / name).read_text())
        edit(data)
        (folder / name).write_text(json.dumps(data, indent=2))
    return tamper


def _swap_plus_minus(tokenizer: dict) -> None:
    vocab = tokenizer["model"]["vocab"]
    vocab["+"], vocab["-"] = vocab["-"], vocab["+"]  # every "+" step is read as "-": every step scored 0.0


def _flip_middle_byte(folder: Path) -> None:
    weights = folder / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[len(data) // 2] ^= 0xFF  # the middle of the file: a digest of its ends would miss it
    weights.write_bytes(bytes(data))


# (what is tampered, the file the refusal must name, the tampering): each one loads and changes the scores.
TAMPERINGS = [
    ("weights", "model.safetensors changed", _flip_middle_byte),
    ("tokenizer + and - swapped", "tokenizer.json changed", _edit_json("tokenizer.json", _swap_plus_minus)),
    ("chat template added", "tokenizer_config.json changed",
     _edit_json("tokenizer_config.json", lambda c: c.update(chat_template="{{ messages[0]['content'] }}"))),
    ("chat template file added", "chat_template.jinja was added",
     lambda f: (f / "chat_template.jinja").write_text("{{ messages[0]['content'] }}")),
    ("rms_norm_eps", "config.json changed", _edit_json("config.json", lambda c: c.update(rms_norm_eps=1e-2))),
    ("rope_theta", "config.json changed",
     _edit_json("config.json", lambda c: c["rope_parameters"].update(rope_theta=500.0))),
    ("generation config", "generation_config.json changed",
     _edit_json("generation_config.json", lambda c: c.update(temperature=0.1))),
    ("beta", "implicit_prm.json changed", _edit_json("implicit_prm.json", lambda c: c.update(beta=5.0))),
    ("off-policy limit", "implicit_prm.json changed",
     _edit_json("implicit_prm.json", lambda c: c.update(ood_ref_logprob=-100.0))),
    ("tokenizer config removed", "tokenizer_config.json is missing",
     lambda f: (f / "tokenizer_config.json").unlink()),
]


@pytest.mark.parametrize("what,named,tamper", TAMPERINGS, ids=[t[0] for t in TAMPERINGS])
def test_each_tampered_file_of_the_shipped_prm_is_refused_by_name(tmp_path: Path, what: str, named: str,
                                                                  tamper: Callable[[Path], None]) -> None:
    copy = _copy(tmp_path)
    verify_shipped_prm(copy)  # the untouched copy passes
    before = weights_digest(copy)
    tamper(copy)
    with pytest.raises(ValueError, match=rf"does not match the digests in its card: {re.escape(named)}.*make prm"):
        verify_shipped_prm(copy)
    assert weights_digest(copy) != before  # and it is another registry version


def test_another_reference_in_the_recipe_is_refused(tmp_path: Path) -> None:
    copy = _copy(tmp_path)
    policy = shutil.copytree(SHIPPED_POLICY_DIR, tmp_path / "policy")  # the same policy, under another name
    _edit_json("implicit_prm.json", lambda c: c.update(reference=str(policy)))(copy)
    with pytest.raises(ValueError, match=r"implicit_prm.json changed; the reference is now '.*policy@"):
        verify_shipped_prm(copy)


def _rebuild_policy(cache: Path, change: bool) -> None:
    """A policy in the model cache, as a rebuild leaves it: the shipped one, one weight byte changed when
    ``change``, with its card's digests matching (so it resolves and loads)."""
    rebuilt = Path(shutil.copytree(SHIPPED_POLICY_DIR, cache / "arith-policy"))
    if change:
        _flip_middle_byte(rebuilt)
    card = json.loads((rebuilt / "policy_card.json").read_text())
    card["weights_sha256"] = weight_digests(rebuilt)
    (rebuilt / "policy_card.json").write_text(json.dumps(card))


@pytest.mark.parametrize("change", [True, False], ids=["one weight changed", "bit-identical"])
def test_a_rebuilt_reference_policy_is_a_new_version_and_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 change: bool) -> None:
    monkeypatch.setenv(MODEL_CACHE_ENV, str(tmp_path / "cache"))
    before = weights_digest(SHIPPED_PRM_DIR)
    _rebuild_policy(tmp_path / "cache", change)  # arith-policy now resolves to the rebuild
    if change:
        assert weights_digest(SHIPPED_PRM_DIR) != before
        with pytest.raises(ValueError, match=r"the reference is now 'arith-policy@\w+', not 'arith-policy@\w+'.*"
                                             r"model cache"):
            verify_shipped_prm(SHIPPED_PRM_DIR)
    else:
        assert weights_digest(SHIPPED_PRM_DIR) == before
        verify_shipped_prm(SHIPPED_PRM_DIR)


def test_a_tampered_or_missing_shipped_card_is_refused(tmp_path: Path) -> None:
    copy = _copy(tmp_path)
    card = json.loads((copy / "prm_card.json").read_text())
    card["shipped"]["score_digests"]["files"]["tokenizer.json"] = "0" * 64
    (copy / "prm_card.json").write_text(json.dumps(card))
    with pytest.raises(ValueError, match=r"tokenizer\.json changed"):
        verify_shipped_prm(copy)
    del card["shipped"]["score_digests"]
    (copy / "prm_card.json").write_text(json.dumps(card))
    with pytest.raises(ValueError, match="records no digests of the files that change its scores"):
        verify_shipped_prm(copy)
    (copy / "prm_card.json").write_text("{not json")
    with pytest.raises(ValueError, match=r"no readable shipped-PRM card.*make prm"):
        verify_shipped_prm(copy)


def test_a_card_of_the_weights_only_format_is_resealed_unless_its_weights_changed(tmp_path: Path) -> None:
    copy = _copy(tmp_path)
    card = json.loads((copy / "prm_card.json").read_text())
    card["shipped"].pop("score_digests")
    card["shipped"]["weights_sha256"] = weight_digests(copy)  # the format cards had before every file was digested
    (copy / "prm_card.json").write_text(json.dumps(card))
    legacy = copy.parent / "legacy"
    shutil.copytree(copy, legacy)
    reseal_shipped_card(copy)
    assert "weights_sha256" not in verify_shipped_prm(copy)
    _flip_middle_byte(legacy)
    with pytest.raises(ValueError, match="resealing would bless them"):
        reseal_shipped_card(legacy)


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
