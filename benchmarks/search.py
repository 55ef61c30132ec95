"""PRM-guided search at equal generated-token budgets: best-of-N, majority vote, step-level beam search and DVTS.

Run: ``.venv/bin/python benchmarks/search.py [--prm DIR] [--problems 24] [--budgets 320 640 1280] [--seeds 0 1]
[--sets in_distribution=4,5,6 harder=7,8 hardest=9,10]``

Held-out generated arithmetic word problems per ``--sets`` entry (``NAME=OPS``: the operation counts of that set,
``prm.search.run.heldout_problems``), the shipped policy (``arith-policy``) on a real vLLM engine, and a PRM:
``--prm DIR`` (any PRM folder ``prm.scoring.load_prm`` reads: a classification head or an LM-head PRM; on
transformers, new steps are scored from their parent's cached keys/values unless ``--no-prefix-cache``), else
the newest ``prm_model`` asset PRM (``models/prm/LATEST``) when there is one, else one trained here for a few steps
(``benchmarks/workload.py``'s ``default_prm``).

``--problem-seed`` picks other held-out problems: choose ``--aggregation`` and ``--m`` on a validation seed, then
report the test problems (seed 0) once. Budgets, widths and intervals: :mod:`prm.search.compare` (what the
``search_comparison`` asset runs too).

The last stdout line is one JSON object: ``budgets``, ``seeds``, ``sets``, ``methods`` (per set, method and budget:
``accuracy`` pooled over seeds, ``accuracy_ci``, a 95% bootstrap over problems of each problem's mean correctness,
the widths, ``generated_tokens`` and ``prm_tokens`` per problem, ``seeds``), ``vs_majority`` and ``vs_best_of_n``
(per set, method and budget: ``diff``, the paired difference in accuracy from that baseline on the same problems,
and ``diff_ci``, its 95% paired bootstrap interval over problems), ``prm``, ``policy``, ``solution_tokens`` (per
set) and ``wall_s``.
``--plot PNG`` draws accuracy against the tokens each method spent.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

# Run as a script, this folder heads sys.path: the project root goes first, for benchmarks.* and tests.*.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from prm.generation import GenerationConfig, make_backend
from prm.models import local_model, model_cache_dir, resolve_model
from prm.scoring import load_prm
from prm.search import MAX_M, check_problem_count, compare_at_budgets, heldout_problems, plot_accuracy_vs_budget
from prm.settings import check_count, check_seed
from prm.training import PRMArtifacts


def _args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--policy", default="arith-policy", help="policy name or folder")
    p.add_argument("--prm", default=None, help="PRM folder or name, e.g. arith-prm (default: the newest prm_model "
                   "PRM, else a quick one)")
    p.add_argument("--problems", type=_checked(_problem_count), default=24, help="held-out problems")
    p.add_argument("--budgets", type=int, nargs="+", default=[320, 640, 1280], help="generated tokens per problem")
    p.add_argument("--m", type=_checked(lambda v: check_count("--m", v, high=MAX_M, why="expansions per beam")),
                   default=4, help="expansions per beam per step; samples per sampling round")
    p.add_argument("--aggregation", default="last", help="how beams and samples are ranked (SearchConfig)")
    p.add_argument("--seeds", type=_checked(lambda v: check_seed("--seeds", v)), nargs="+", default=[0])
    p.add_argument("--sets", nargs="+", default=[("in_distribution", (4, 5, 6))], type=_problem_set,
                   help="problem sets as NAME=OPS (operation counts), e.g. in_distribution=4,5,6 harder=7,8")
    p.add_argument("--problem-seed", type=_checked(lambda v: check_seed("--problem-seed", v)), default=0,
                   help="which held-out problems (0: the test problems; another seed, e.g. 1, a validation set on "
                        "which to choose --aggregation and --m)")
    p.add_argument("--no-prefix-cache", action="store_true",
                   help="rescore every candidate in full (the same picks; the cost the prefix cache saves)")
    p.add_argument("--plot", default=None, help="accuracy-against-budget PNG (default: none)")
    return p.parse_args(argv)


def _checked(check: Callable[[int], int]) -> Callable[[str], int]:
    """An argparse type: the text as an int that ``check`` returns, or argparse's one-line usage error with
    ``check``'s reason (``--m 0`` once divided by zero after the engine had started)."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        try:
            return check(value)
        except ValueError as err:
            raise argparse.ArgumentTypeError(str(err)) from None
    return parse


def _problem_count(n: int) -> int:
    check_problem_count(n)
    return n


def _problem_set(text: str) -> tuple[str, tuple[int, ...]]:
    """``NAME=OPS`` as (name, operation counts); an argparse error that shows the form otherwise."""
    name, _, ops = text.partition("=")
    try:
        counts = tuple(int(x) for x in ops.split(","))
    except ValueError:
        counts = ()
    if not name or not counts or min(counts) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not NAME=OPS; write e.g. harder=7,8 (operation counts >= 1)")
    return name, counts


def _prm(arg: str | None) -> Path:
    if arg:
        return local_model(arg)  # a folder, or a name such as arith-prm
    try:
        return PRMArtifacts.default().trained_model()  # the newest PRM prm_model trained
    except (FileNotFoundError, ValueError):
        pass
    from benchmarks.workload import default_prm

    return default_prm(model_cache_dir() / "search-benchmark-prm", seed=0, max_steps=30)


def main() -> None:
    args = _args()
    start = time.time()
    prm_dir = _prm(args.prm)
    scorer = load_prm(prm_dir)
    policy = resolve_model(args.policy)
    out: dict[str, list] = {"methods": [], "vs_majority": [], "vs_best_of_n": []}
    solution_tokens = {}
    with make_backend(GenerationConfig(model=policy, seed=0)) as backend:
        for name, ops in args.sets:
            problems = heldout_problems(args.problems, seed=args.problem_seed, n_ops=ops)
            result = compare_at_budgets(problems, backend, scorer, args.budgets, args.seeds, m=args.m,
                                        aggregation=args.aggregation, prefix_cache=not args.no_prefix_cache,
                                        progress=lambda line, name=name: print(f"[{name}] {line}", flush=True))
            for key in out:
                out[key] += [{"set": name, **row} for row in getattr(result, key)]
            solution_tokens[name] = result.solution_tokens
    if args.plot:
        plot_accuracy_vs_budget(out["methods"], args.plot,
                                title=f"{args.problems} problems x {len(args.seeds)} seeds")
    print(json.dumps({"budgets": args.budgets, "seeds": args.seeds, "problems": args.problems,
                      "problem_seed": args.problem_seed,
                      "sets": {name: list(ops) for name, ops in args.sets}, **out, "prm": str(prm_dir),
                      "policy": str(policy), "solution_tokens": solution_tokens, "aggregation": args.aggregation,
                      "prefix_cache": not args.no_prefix_cache, "wall_s": round(time.time() - start, 1)}))


if __name__ == "__main__":
    main()
