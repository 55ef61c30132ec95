"""Training rows whose text no tokenizer can encode are refused by the row check, naming the row and field, before
any training starts (issue 38 item 13)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prm.training.rows import check_rows, locate_rows

ROW = {"prompt": "2+3 =", "completions": ["2+3 = 5", "Answer: 5"], "labels": [True, True]}


@pytest.mark.parametrize("change,field", [
    ({"prompt": "2+3 \ud800="}, "field 'prompt'"),
    ({"completions": ["2+3 = 5", "Answer: \udfff5"]}, r"completions\[1\]"),
])
def test_a_lone_surrogate_is_refused_with_its_row_and_field(tmp_path: Path, change: dict, field: str) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(ROW) + "\n" + json.dumps(ROW | change) + "\n", encoding="utf-8")  # "\ud800" escapes
    rows, where = locate_rows(path)
    with pytest.raises(ValueError, match=rf"rows\.jsonl:2: {field} holds a lone surrogate .* at character \d+"):
        check_rows(rows, "hard", where)


def test_text_with_paired_surrogates_is_fine() -> None:
    check_rows([ROW | {"prompt": "2+3 = ? 🙂", "completions": ["2+3 = 5 🙂", "Answer: 5"]}], "hard")
