"""docs/concepts/rewards.md lists exactly the shapings RewardConfig accepts (it once listed a `total` the code
rejects and left out `clip_delta`)."""

from __future__ import annotations

import re
from pathlib import Path

from prm.rewards import SHAPING_NAMES

PAGE = Path(__file__).resolve().parents[2] / "docs" / "concepts" / "rewards.md"


def test_the_shaping_table_names_every_shaping_and_no_other():
    rows = re.findall(r"^\| `([a-z_]+)` \|", PAGE.read_text(encoding="utf-8"), flags=re.MULTILINE)
    table = rows[: rows.index("last") + 1]  # the first table on the page is the shaping table
    assert sorted(table) == sorted(SHAPING_NAMES)
