"""The shipped judge adapter: its weights match the digest in its card, the card's held-out table lies in the band
the judgments check enforces, and the card records the recipe's defaults (so `make judge` rebuilds it)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from prm.judge_training.config import JudgeTrainConfig
from prm.models.constants import SHIPPED_JUDGE_DIR
from prm.models.judge import judge_card_problems, read_judge_card, verify_adapter


def test_shipped_judge_matches_its_card_and_lies_in_its_band() -> None:
    digest = verify_adapter(SHIPPED_JUDGE_DIR)
    card = read_judge_card(SHIPPED_JUDGE_DIR)
    assert card is not None and card["digest"] == digest
    assert judge_card_problems(card) == []
    assert card["config"] == json.loads(json.dumps(JudgeTrainConfig().to_dict()))
    assert sum(p.stat().st_size for p in SHIPPED_JUDGE_DIR.iterdir()) < 20 * 2**20  # small enough for git


def test_an_altered_shipped_adapter_is_refused(tmp_path: Path) -> None:
    copy = Path(shutil.copytree(SHIPPED_JUDGE_DIR, tmp_path / "judge"))
    weights = copy / "adapter_model.safetensors"
    data = weights.read_bytes()
    weights.write_bytes(data[:-1] + bytes([data[-1] ^ 0xFF]))
    with pytest.raises(ValueError, match="does not match the digest in its card"):
        verify_adapter(copy)
    (copy / "judge_card.json").unlink()
    with pytest.raises(FileNotFoundError, match="make judge"):
        verify_adapter(copy)
