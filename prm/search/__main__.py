"""``python -m prm.search``: one search method on held-out problems (generated arithmetic, or a warehouse source's
problems with a gold answer), from the command line.

Example::

    python -m prm.search run --prm models/prm/model --problems 16 --method beam_search --n 4 --m 4 --budget 2000
    python -m prm.search run --prm models/prm/model --policy smollm2-135m-instruct --source gsm8k --method best_of_n

``--budget`` caps the generated tokens per problem (every expansion and sample counts, kept or not; no new
round starts once it is spent); ``--n``/``--m`` set the width (see ``prm.search.SearchConfig``). The last
stdout line is one JSON object: the method's accuracy, its 95% bootstrap interval and its generated tokens.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from prm.models.constants import ARITH_POLICY_NAME
from prm.search.methods import SEARCH_METHODS
from prm.training.constants import CARD_FILE


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m prm.search", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("run", help="one method on held-out problems")
    s.add_argument("--policy", default=None, help="policy name or folder (prm.models.resolve_model); default: the "
                   "model the PRM was initialised from (its card's base_model: Math-Shepherd initialises the PRM from "
                   "the generator, so a recipe's PRM brings its policy), else arith-policy")
    s.add_argument("--prm", required=True, help="PRM folder (prm.training.train_prm's output)")
    s.add_argument("--problems", type=int, default=16, help="problems to search")
    s.add_argument("--source", help="a warehouse source (e.g. gsm8k): its problems with a gold answer instead of "
                   "generated arithmetic; pick one the PRM was not trained on")
    s.add_argument("--warehouse", help="the warehouse root for --source (default: $PRM_DATA_ROOT)")
    s.add_argument("--method", required=True, choices=tuple(SEARCH_METHODS))
    s.add_argument("--budget", type=int, help="generated tokens per problem (default: no cap)")
    s.add_argument("--n", type=int, default=4, help="beams / samples (SearchConfig.n)")
    s.add_argument("--m", type=int, default=4, help="expansions per beam per step (SearchConfig.m)")
    s.add_argument("--aggregation", default="last", help="min, product, last or mean (SearchConfig.aggregation)")
    s.add_argument("--seed", type=int, default=0)
    return p


def policy_of(prm_folder: str | Path) -> str:
    """The policy a PRM folder's card says it was initialised from (``base_model``), else the default policy.

    >>> policy_of("/nonexistent")
    'arith-policy'
    """
    card = Path(prm_folder) / CARD_FILE
    base = json.loads(card.read_text(encoding="utf-8")).get("base_model") if card.is_file() else None
    return base if isinstance(base, str) and base else ARITH_POLICY_NAME


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        from prm.generation import GenerationConfig, make_backend
        from prm.models import resolve_model
        from prm.scoring import load_prm
        from prm.search.config import SearchConfig
        from prm.search.run import heldout_problems, search_problems, warehouse_problems
        from warehouse import default_root

        if args.problems < 1:
            raise ValueError(f"--problems {args.problems}: search at least one problem")
        config = SearchConfig(n=args.n, m=args.m, aggregation=args.aggregation, token_budget=args.budget,
                              seed=args.seed)
        if args.source:
            problems = warehouse_problems(args.warehouse or default_root(), args.problems, source=args.source)
        else:
            problems = heldout_problems(args.problems, args.seed)
        scorer = load_prm(args.prm)
        policy = args.policy or policy_of(args.prm)
        with make_backend(GenerationConfig(model=resolve_model(policy), seed=args.seed)) as backend:
            summary = search_problems(args.method, problems, backend, scorer, config)
    except (ValueError, FileNotFoundError) as err:
        print(f"Error: {err}", file=sys.stderr)
        return 1
    print(json.dumps(summary.as_dict()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
