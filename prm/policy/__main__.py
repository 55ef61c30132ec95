"""Build the default policy: ``python -m prm.policy build --out DIR`` (``make policy`` rebuilds the shipped one).

The build stops on ``max_steps`` or the quality rule, never on wall-clock time, so the same command gives
the same weights on a busy machine (only slower). The card written next to the weights says how it went.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

from prm.policy.card import card_problems, read_card
from prm.policy.config import PolicyTrainConfig
from prm.policy.train import build_policy


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m prm.policy", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser("build", help="train a policy folder (reused when its card has the same config)")
    build.add_argument("--out", type=Path, required=True, help="folder to write (HF model + policy_card.json)")
    build.add_argument("--force", action="store_true", help="retrain even when the folder has the same config")
    for f in dataclasses.fields(PolicyTrainConfig):
        if f.type in (int, float, "int", "float"):
            build.add_argument(f"--{f.name.replace('_', '-')}", type=float if "float" in str(f.type) else int,
                               default=None, help=f"default {f.default}")
    card = sub.add_parser("card", help="print a policy folder's card and whether it lies in the labelers' band")
    card.add_argument("folder", type=Path)
    args = parser.parse_args(argv)
    if args.command == "build":
        overrides = {f.name: getattr(args, f.name) for f in dataclasses.fields(PolicyTrainConfig)
                     if getattr(args, f.name, None) is not None}
        path = build_policy(args.out, PolicyTrainConfig(**overrides), force=args.force)
        print(read_card(path)["eval_markdown"])
        return _report(path)
    return _report(args.folder)


def _report(folder: Path) -> int:
    card = read_card(folder)
    if card is None:
        print(f"Error: {folder} has no policy_card.json - build it with `python -m prm.policy build`", file=sys.stderr)
        return 1
    summary = {k: card.get(k) for k in ("config_hash", "train_steps", "stopped_by", "train_seconds")}
    print(json.dumps(summary))
    problems = card_problems(card)
    for problem in problems:
        print(f"outside the labelers' band: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
