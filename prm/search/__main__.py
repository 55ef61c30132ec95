"""``python -m prm.search``: one search method on held-out problems (generated arithmetic, or a warehouse source's
problems with a gold answer), from the command line.

Example::

    python -m prm.search run --prm models/prm --problems 16 --method beam_search --n 4 --m 4 --budget 2000
    python -m prm.search run --prm models/prm --policy smollm2-135m-instruct --source gsm8k --method best_of_n

``--budget`` caps the generated tokens per problem (every expansion and sample counts, kept or not; no new
round starts once it is spent); ``--n``/``--m`` set the width (see ``prm.search.SearchConfig``). The last
stdout line is one JSON object: the method's accuracy, its 95% bootstrap interval and its generated tokens.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from prm.models import ARITH_POLICY_NAME
from prm.search.methods import SEARCH_METHODS
from prm.training import CARD_FILE, read_prm_card


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
    """The policy a PRM folder's card says it was initialised from (``base_model``), else the default policy; a
    card that is not a JSON object is a ValueError naming it (:func:`prm.training.read_prm_card`).

    >>> policy_of("/nonexistent")
    'arith-policy'
    """
    base = read_prm_card(prm_folder).get("base_model") if (Path(prm_folder) / CARD_FILE).is_file() else None
    return base if isinstance(base, str) and base else ARITH_POLICY_NAME


def _first_line(err: BaseException) -> str:
    """An error as one line: engine errors append their log after the first line."""
    text = str(err).strip() or type(err).__name__
    return text.splitlines()[0]


def _load(load_prm: Callable[[str], Any], folder: str) -> Any:
    """``load_prm(folder)``; a folder that does not load (no weights, a truncated safetensors file, a config that
    is not JSON) is a ValueError that names it and says what to do, not a library traceback."""
    try:
        return load_prm(folder)
    except (ValueError, FileNotFoundError):
        raise
    except Exception as err:  # safetensors, torch and transformers each raise their own types for a broken folder
        raise ValueError(f"PRM folder {folder} does not load ({type(err).__name__}: {_first_line(err)}); retrain it "
                         "(python -m prm.training train ...) or point --prm at a complete folder") from None


def check_hub_id_available(repo_id: str) -> None:
    """Refuse a hub id that is neither in the local Hugging Face cache nor downloadable (offline), before an
    engine starts on it (vLLM's worker would die on it with a traceback in its log). Offline means
    ``HF_HUB_OFFLINE`` is set, as this project's machines run: ``HF_HUB_OFFLINE=1 python -m prm.search run --policy
    org/name ...`` then ends with "Error: model 'org/name' is not in the local Hugging Face cache ...".
    """
    from huggingface_hub import try_to_load_from_cache
    from huggingface_hub.constants import HF_HUB_OFFLINE

    if isinstance(try_to_load_from_cache(repo_id, "config.json"), str):
        return
    import os

    offline = HF_HUB_OFFLINE or os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on")
    if offline:
        raise ValueError(f"model {repo_id!r} is not in the local Hugging Face cache and this run is offline "
                         "(HF_HUB_OFFLINE); download it where there is network (huggingface-cli download "
                         f"{repo_id}), pass a local folder, or use a registered model such as {ARITH_POLICY_NAME!r}")


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        from prm.generation import GenerationConfig, make_backend
        from prm.models import resolve_model
        from prm.scoring import load_prm
        from prm.search.config import SearchConfig
        from prm.search.run import check_problem_count, heldout_problems, search_problems, warehouse_problems
        from warehouse import default_root

        check_problem_count(args.problems)
        config = SearchConfig(n=args.n, m=args.m, aggregation=args.aggregation, token_budget=args.budget,
                              seed=args.seed)
        if args.source:
            problems = warehouse_problems(args.warehouse or default_root(), args.problems, source=args.source)
        else:
            problems = heldout_problems(args.problems, args.seed)
        policy = args.policy or policy_of(args.prm)
        model = resolve_model(policy)
        if isinstance(model, str):
            check_hub_id_available(model)
        scorer = _load(load_prm, args.prm)
        with make_backend(GenerationConfig(model=model, seed=args.seed)) as backend:
            summary = search_problems(args.method, problems, backend, scorer, config)
    except (ValueError, OSError, RuntimeError) as err:  # OSError: FileNotFoundError; RuntimeError: the engine died
        print(f"Error: {_first_line(err)}", file=sys.stderr)
        return 1
    print(json.dumps(summary.as_dict()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
