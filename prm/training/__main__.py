"""Train a PRM from a TRL-format export: ``python -m prm.training train --data ROWS --out DIR [--max-steps N]``.

The same command runs under a launcher, one process per rank (DDP: gloo on CPU, NCCL on CUDA)::

    accelerate launch --multi_gpu --num_processes 2 -m prm.training train --data rows.jsonl --out models/prm
    torchrun --nproc_per_node 2 -m prm.training train --data rows.jsonl --out models/prm

``--multi_gpu`` is accelerate's name for its torchrun launcher and also serves CPU-only machines; its
``--cpu --num_processes N`` starts one process unless mpirun is configured, which this command refuses.
``--batch-size`` is the global batch (each of N ranks takes batch_size / N); only rank 0 writes ``--out``
and prints the card's summary.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import os
import sys
from pathlib import Path

from prm.training.config import PRMTrainConfig

# The annotations of PRMTrainConfig's fields (strings under ``from __future__ import annotations``) and the
# argparse type of each; bools become --flag / --no-flag.
_OFF = "none"  # what `--ref-floor none` parses to: the field set to None, not left at its default


def _float_or_off(text: str) -> float | str:
    return _OFF if text.strip().lower() == _OFF else float(text)


_OPTION_TYPES = {"int": int, "float": float, "str": str, "int | None": int, "float | None": _float_or_off}
# What the card summary printed after training holds.
_SUMMARY_KEYS = ("global_step", "world_size", "per_device_batch_size", "rows", "final_metrics")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m prm.training", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    train = sub.add_parser(
        "train", help="train a PRM folder from TRL stepwise rows (.jsonl, .parquet, datasets folder)",
        description="Example: python -m prm.training train --data exports/omegaprm.jsonl --out models/prm "
                    "--max-steps 300")
    train.add_argument("--data", type=Path, required=True,
                       help="TRL stepwise-supervision rows: a .jsonl or .parquet file, a datasets save_to_disk "
                            "folder, or a TrainingSet.save folder")
    train.add_argument("--out", type=Path, required=True, help="PRM folder to write (HF model + prm_card.json)")
    train.add_argument("--resume", action="store_true", help="continue from the last checkpoint in --out")
    for f in dataclasses.fields(PRMTrainConfig):
        flag = f"--{f.name.replace('_', '-')}"
        if f.type in (bool, "bool"):
            train.add_argument(flag, action=argparse.BooleanOptionalAction, default=None,
                               help=f"default {f.default}")
        else:
            train.add_argument(flag, type=_OPTION_TYPES[str(f.type)], default=None, help=f"default {f.default}")
    shipped = sub.add_parser(
        "build-shipped", help="rebuild the shipped PRM (prm/shipped/arith-prm) with its recipe (`make prm`)",
        description="Samples the shipped policy on the recipe's problems, trains the LM-head PRM on exact step truth "
                    "and writes its card (validation and test figures, weight digests). Counted in optimizer steps.")
    shipped.add_argument("--out", type=Path, default=None, help="folder to write (default: the shipped one)")
    shipped.add_argument("--warehouse", type=Path, default=None,
                         help="a warehouse already holding the recipe's samples (from an earlier build): reused")
    shipped.add_argument("--source", default=None,
                         help="the source of --warehouse's samples (benchmarks/prm_quality.py's: bench)")
    shipped.add_argument("--force", action="store_true", help="replace an existing folder (it is a committed model)")
    return parser


def _build_shipped(args: argparse.Namespace) -> int:
    from prm.training.ship import SHIPPED_PRM_DIR, build_shipped_prm  # torch, vLLM: after parsing

    try:
        entry = build_shipped_prm(args.out or SHIPPED_PRM_DIR, warehouse=args.warehouse, force=args.force,
                                  **({"source": args.source} if args.source else {}),
                                  progress=lambda m: print(m, file=sys.stderr, flush=True))
    except (ValueError, OSError) as exc:
        return _fail(str(exc))
    print(json.dumps(entry["figures"]))
    return 0


def _config(args: argparse.Namespace) -> PRMTrainConfig:
    overrides = {f.name: None if getattr(args, f.name) == _OFF else getattr(args, f.name)
                 for f in dataclasses.fields(PRMTrainConfig) if getattr(args, f.name) is not None}
    return PRMTrainConfig(**overrides)


def _single_process_launch() -> bool:
    """accelerate's plain launcher (``--cpu`` with N > 1 and no mpirun) sets MASTER_ADDR but starts one process."""
    return "ACCELERATE_USE_CPU" in os.environ and "MASTER_ADDR" in os.environ and "WORLD_SIZE" not in os.environ


def _fail(message: str) -> int:
    print(f"Error: {message}", file=sys.stderr)
    return 1


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "build-shipped":
        return _build_shipped(args)
    if _single_process_launch():
        return _fail("accelerate launch started one process although --num_processes > 1 (its --cpu launcher needs "
                     "mpirun) - launch with `accelerate launch --multi_gpu --num_processes N` or `torchrun "
                     "--nproc_per_node N`, which run DDP over gloo on CPU")
    if not args.data.exists():
        return _fail(f"--data {args.data} does not exist - pass a TRL stepwise export (.jsonl, .parquet or a "
                     "datasets folder)")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    from prm.training.trainer import read_prm_card, train_prm  # torch and transformers: after the cheap checks

    try:
        config = _config(args)
        folder = train_prm(args.data, args.out, config, resume=args.resume)
    except (ValueError, OSError) as exc:  # bad rows, config or paths: one line that says what to fix
        return _fail(str(exc))
    if int(os.environ.get("RANK", "0")) == 0:  # the rank that wrote the folder; the others print nothing
        card = read_prm_card(folder)
        print(json.dumps({"out": str(folder), **{k: card.get(k) for k in _SUMMARY_KEYS}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
