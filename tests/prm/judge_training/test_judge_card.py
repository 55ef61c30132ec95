"""A judge card that is not a JSON object is an error naming its file and the fix (issue 38 item 13)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from prm.models.constants import JUDGE_CARD_FILE, SHIPPED_JUDGE_DIR
from prm.models.judge import read_judge_card, verify_adapter


@pytest.mark.parametrize("text,match", [
    ("{oops", "is not JSON"),
    ("[1, 2]", "holds a JSON list, not an object"),
    ("[" * 100_000, "is not JSON|is JSON nested too deeply"),
])
def test_a_broken_card_names_its_path(tmp_path: Path, text: str, match: str) -> None:
    folder = shutil.copytree(SHIPPED_JUDGE_DIR, tmp_path / "judge")
    (folder / JUDGE_CARD_FILE).write_text(text, encoding="utf-8")
    for read in (read_judge_card, verify_adapter):
        with pytest.raises(ValueError, match=rf"judge card {folder / JUDGE_CARD_FILE} ({match}).*make judge"):
            read(folder)


def test_a_card_that_is_not_utf8_names_its_path(tmp_path: Path) -> None:
    folder = shutil.copytree(SHIPPED_JUDGE_DIR, tmp_path / "judge")
    (folder / JUDGE_CARD_FILE).write_bytes(b'{"digest": "\xff"}')
    with pytest.raises(ValueError, match=r"judge card .* is not UTF-8 text"):
        read_judge_card(folder)
