"""``python -m prm.search``: one search method on held-out generated arithmetic problems, from the command line.

Example::

    python -m prm.search run --prm models/prm/model --problems 16 --method beam_search --n 4 --m 4 --budget 2000

``--budget`` caps the generated tokens per problem (every expansion and sample counts, kept or not; no new
round starts once it is spent); ``--n``/``--m`` set the width (see ``prm.search.SearchConfig``). The last
stdout line is one JSON object: the method's accuracy, its 95% bootstrap interval and its generated tokens.
"""

from __future__ import annotations

import argparse
import json
import sys

from prm.search.methods import SEARCH_METHODS


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m prm.search", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("run", help="one method on held-out problems")
    s.add_argument("--policy", default="arith-policy", help="policy name or folder (prm.models.resolve_model)")
    s.add_argument("--prm", required=True, help="PRM folder (prm.training.train_prm's output)")
    s.add_argument("--problems", type=int, default=16, help="held-out generated arithmetic problems")
    s.add_argument("--method", required=True, choices=tuple(SEARCH_METHODS))
    s.add_argument("--budget", type=int, help="generated tokens per problem (default: no cap)")
    s.add_argument("--n", type=int, default=4, help="beams / samples (SearchConfig.n)")
    s.add_argument("--m", type=int, default=4, help="expansions per beam per step (SearchConfig.m)")
    s.add_argument("--aggregation", default="last", help="min, product, last or mean (SearchConfig.aggregation)")
    s.add_argument("--seed", type=int, default=0)
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        from prm.generation import GenerationConfig, make_backend
        from prm.models import resolve_model
        from prm.scoring import load_prm
        from prm.search.config import SearchConfig
        from prm.search.run import heldout_problems, search_problems

        if args.problems < 1:
            raise ValueError(f"--problems {args.problems}: search at least one problem")
        config = SearchConfig(n=args.n, m=args.m, aggregation=args.aggregation, token_budget=args.budget,
                              seed=args.seed)
        problems = heldout_problems(args.problems, args.seed)
        scorer = load_prm(args.prm)
        with make_backend(GenerationConfig(model=resolve_model(args.policy), seed=args.seed)) as backend:
            summary = search_problems(args.method, problems, backend, scorer, config)
    except (ValueError, FileNotFoundError) as err:
        print(f"Error: {err}", file=sys.stderr)
        return 1
    print(json.dumps(summary.as_dict()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
