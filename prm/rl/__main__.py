"""``python -m prm.rl``: one GRPO arm, or the whole comparison, from the command line.

The same entry point runs on a GPU machine under ``accelerate launch`` (TRL trains in bf16 there and
generates with vLLM where it imports):

Example::

    python -m prm.rl compare --prm models/prm --out models/rl --steps 100
    accelerate launch -m prm.rl run --arm prm_min --prm models/prm --out models/rl/prm_min --steps 500

The last stdout line is one JSON object: the arm's summary (``run``) or every arm's (``compare``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import fields

from prm.rl.config import ARMS, RLRunConfig


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m prm.rl", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    for name, text in (("run", "one arm"), ("compare", "every arm, same budget, plus table and plot")):
        s = sub.add_parser(name, help=text)
        s.add_argument("--policy", default="arith-policy", help="policy name or folder (prm.models.resolve_model)")
        s.add_argument("--prm", required=True, help="PRM folder (prm.training.train_prm's output)")
        s.add_argument("--out", required=True, help="output folder")
        s.add_argument("--steps", type=int, help="GRPO steps per arm (default: RLRunConfig.steps)")
        s.add_argument("--set", action="append", default=[], metavar="FIELD=JSON",
                       help="any RLRunConfig field, e.g. --set learning_rate=2e-4 --set 'eval_ops=[9,10]'")
        if name == "run":
            s.add_argument("--arm", required=True, choices=tuple(ARMS))
        else:
            s.add_argument("--arms", nargs="+", choices=tuple(ARMS), help="default: RLRunConfig.arms")
    return p


def _config(args: argparse.Namespace) -> RLRunConfig:
    names = {f.name for f in fields(RLRunConfig)}
    values: dict = {}
    for item in args.set:
        key, sep, raw = item.partition("=")
        if not sep or key not in names:
            raise ValueError(f"--set {item!r} must be FIELD=VALUE with FIELD one of {sorted(names)}")
        try:
            values[key] = json.loads(raw)
        except json.JSONDecodeError:
            values[key] = raw  # a bare string such as --set style=word
    if args.steps is not None:
        values["steps"] = args.steps
    if getattr(args, "arms", None):
        values["arms"] = tuple(args.arms)
    return RLRunConfig(**values)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        from prm.models import resolve_model
        from prm.rl.grpo import run_grpo
        from prm.rl.report import compare_arms

        config = _config(args)
        policy = resolve_model(args.policy)
        if args.command == "run":
            summary = run_grpo(policy, args.prm, args.arm, config, args.out, progress=print).summary()
        else:
            comparison = compare_arms(policy, args.prm, config, args.out, progress=print)
            print(comparison.markdown)
            summary = {"arms": comparison.table(), "plot": str(comparison.plot)}
    except (ValueError, FileNotFoundError) as err:
        print(f"Error: {err}", file=sys.stderr)
        return 1
    if int(os.environ.get("RANK", "0")) == 0:  # under accelerate launch, one line from the main process
        print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
