"""Rebuild the dataset slices shipped here from the full files (``../shared/data`` in this project's workplace, or any
folder holding ``gsm8k/{train,test}.jsonl`` and ``math500/test.jsonl``).

Each slice holds a file's N shortest problems (question + gold solution, the measure of a recipe's
``order: shortest``) in that order, so a recipe that reads a slice with ``order: shortest`` and a limit up to N takes
exactly the problems it would take from the full file. Run: ``.venv/bin/python recipes/data/make_slices.py [DATA]``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SLICES = {  # slice file -> (source file under DATA, rows kept)
    "gsm8k-train-shortest-256.jsonl": ("gsm8k/train.jsonl", 256),
    "gsm8k-test-shortest-64.jsonl": ("gsm8k/test.jsonl", 64),
    "math500-shortest-64.jsonl": ("math500/test.jsonl", 64),
}


def _length(row: dict) -> int:
    return sum(len(str(row.get(k) or "")) for k in ("question", "problem", "answer", "solution"))


def main(data: Path) -> None:
    for name, (source, n) in SLICES.items():
        rows = [json.loads(line) for line in (data / source).read_text(encoding="utf-8").splitlines() if line.strip()]
        kept = sorted(rows, key=_length)[:n]  # stable: equal lengths keep the file's order
        (HERE / name).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in kept), encoding="utf-8")
        print(f"{name}: {len(kept)} of {len(rows)} rows from {source}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE.parents[2] / "shared" / "data")
