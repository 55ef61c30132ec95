"""``python -m prm.judge_training build --out DIR``: fine-tune the judge adapter (steps, never time) with its card."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import fields

from prm.judge_training.config import JudgeTrainConfig
from prm.judge_training.train import train_judge
from prm.models import JUDGE_CARD_FILE


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser("build", help="train the adapter and write its card")
    build.add_argument("--out", required=True, help="the adapter folder to write")
    for f in fields(JudgeTrainConfig):
        if f.type in ("int", "float", "str"):
            build.add_argument(f"--{f.name.replace('_', '-')}", type={"int": int, "float": float, "str": str}[f.type],
                               default=f.default)
    args = parser.parse_args(argv)
    overrides = {f.name: getattr(args, f.name) for f in fields(JudgeTrainConfig) if hasattr(args, f.name)}
    try:
        config = JudgeTrainConfig(**overrides)
    except ValueError as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 2
    folder = train_judge(config, args.out, progress=lambda m: print(m, file=sys.stderr, flush=True))
    card = json.loads((folder / JUDGE_CARD_FILE).read_text())
    print(json.dumps({"adapter": str(folder), "eval": card["eval"], "train_s": card["train_s"]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
