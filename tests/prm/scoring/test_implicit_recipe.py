"""An LM-head PRM folder is not trusted blindly: its recipe's beta and labels are validated where scoring reads
them, and a reference whose tokenizer is not the one the PRM was trained against is refused (issue 38, item 5)."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pytest

from prm.implicit_recipe import IMPLICIT_CONFIG_FILE, REFERENCE_TOKENIZER_KEY, model_tokenizer_digest, read_recipe
from prm.scoring import load_prm
from prm.training.implicit import ImplicitPRMConfig, train_implicit_prm
from tests.tiny_models import save_tiny_lm

ROWS = [(f"{i} plus 1", ["ok", "no"][: 1 + i % 2], i % 2 == 0) for i in range(8)]


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_tiny_lm(tmp_path_factory.mktemp("base") / "lm", 64)


@pytest.fixture(scope="module")
def trained(base: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    config = ImplicitPRMConfig(base_model=str(base), max_steps=2, batch_size=4, beta=0.5)
    return train_implicit_prm(ROWS, tmp_path_factory.mktemp("prm") / "prm", config)


@pytest.fixture(scope="module")
def other_reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A causal LM with another character tokenizer (other ids for the same characters)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from tests.tiny_models import char_tokenizer

    folder = tmp_path_factory.mktemp("other") / "lm"
    tok = char_tokenizer(bos=True)
    config = LlamaConfig(vocab_size=len(tok), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=64)
    torch.manual_seed(0)
    LlamaForCausalLM(config).save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def _copy_with(trained: Path, tmp_path: Path, **changes) -> Path:
    folder = Path(shutil.copytree(trained, tmp_path / "prm"))
    recipe = json.loads((folder / IMPLICIT_CONFIG_FILE).read_text())
    for key, value in changes.items():
        if value is None:
            recipe.pop(key, None)
        else:
            recipe[key] = value
    (folder / IMPLICIT_CONFIG_FILE).write_text(json.dumps(recipe))
    return folder


def test_training_records_the_reference_tokenizer_and_the_folder_loads(trained: Path, base: Path) -> None:
    recipe = json.loads((trained / IMPLICIT_CONFIG_FILE).read_text())
    assert recipe[REFERENCE_TOKENIZER_KEY] == model_tokenizer_digest(base)
    scores = load_prm(trained).score_steps("3 plus 1", ["ok", "no"])
    assert len(scores) == 2 and all(0.0 < s < 1.0 for s in scores)


def test_a_reference_with_another_tokenizer_is_refused(trained: Path, other_reference: Path,
                                                       tmp_path: Path) -> None:
    assert model_tokenizer_digest(other_reference) != model_tokenizer_digest(trained)
    folder = _copy_with(trained, tmp_path, reference=str(other_reference))
    with pytest.raises(ValueError, match=r"tokenizer .* not the .* this PRM was trained against"):
        load_prm(folder)


def test_a_folder_without_the_digest_loads_with_a_warning(trained: Path, tmp_path: Path,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    folder = _copy_with(trained, tmp_path, **{REFERENCE_TOKENIZER_KEY: None})
    with caplog.at_level(logging.WARNING, logger="prm.implicit_recipe.recipe"):
        scorer = load_prm(folder)
    assert "records no digest of its reference's tokenizer" in caplog.text
    assert len(scorer.score_steps("3 plus 1", ["ok"])) == 1


@pytest.mark.parametrize(("change", "match"), [
    ({"beta": -0.5}, r"beta=-0.5 must be a finite number in \(0, 100.0\]"),
    ({"beta": 0}, r"beta=0 must be a finite number in \(0, 100.0\]"),
    ({"beta": 1e6}, r"beta=1000000.0 must be a finite number in \(0, 100.0\]"),
    ({"beta": "0.5"}, r"beta='0.5' must be a finite number"),
    ({"labels": "bogus"}, r"labels='bogus' must be one of \('outcome', 'step'\)"),
])
def test_a_recipe_that_would_score_nonsense_is_refused_where_it_is_read(trained: Path, tmp_path: Path,
                                                                          change: dict, match: str) -> None:
    folder = _copy_with(trained, tmp_path, **change)
    with pytest.raises(ValueError, match=match):
        read_recipe(folder)
    with pytest.raises(ValueError, match=match):
        load_prm(folder)


def test_a_recipe_that_is_not_an_object_names_its_file(tmp_path: Path) -> None:
    (tmp_path / IMPLICIT_CONFIG_FILE).write_text("[1, 2]")
    with pytest.raises(ValueError, match=f"{IMPLICIT_CONFIG_FILE} holds a JSON list"):
        read_recipe(tmp_path)


def test_training_refuses_a_beta_scoring_would_refuse(base: Path) -> None:
    with pytest.raises(ValueError, match=r"beta=1000.0 must be a finite number in \(0, 100.0\]"):
        ImplicitPRMConfig(base_model=str(base), beta=1000.0)


def test_training_refuses_a_reference_with_another_tokenizer(base: Path, other_reference: Path,
                                                             tmp_path: Path) -> None:
    config = ImplicitPRMConfig(base_model=str(base), reference=str(other_reference), max_steps=1, batch_size=4)
    with pytest.raises(ValueError, match="another tokenizer than the base"):
        train_implicit_prm(ROWS, tmp_path / "prm", config)
