"""PRM-guided search at equal generated-token budgets: best-of-N, majority vote, step-level beam search and DVTS.

Run: ``.venv/bin/python benchmarks/search.py [--prm DIR] [--problems 24] [--budgets 320 640 1280] [--seeds 0 1]``

Held-out generated arithmetic word problems (6 and 8 operations, ``prm.search.run.heldout_problems``), the shipped
policy (``arith-policy``) on a real vLLM engine, and a PRM on the batched scorer: ``--prm DIR``, else
``models/prm/model`` (the ``prm_model`` asset's) when it exists, else one trained here for a few steps
(``benchmarks/workload.py``'s ``default_prm``).

Budgets, widths and intervals: :mod:`prm.search.compare` (what the ``search_comparison`` asset runs too).

The last stdout line is one JSON object: ``budgets``, ``seeds``, ``methods`` (per method and budget: ``accuracy``
pooled over seeds, ``accuracy_ci``, a 95% bootstrap over problems of each problem's mean correctness, the widths
and the generated tokens), ``prm``, ``policy``, ``solution_tokens`` and ``wall_s``.
``--plot PNG`` draws accuracy against the tokens each method spent.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

# Run as a script, this folder heads sys.path and benchmarks/verifiers.py would shadow the `verifiers` package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from prm.generation import GenerationConfig, make_backend  # noqa: E402
from prm.models import model_cache_dir, resolve_model  # noqa: E402
from prm.scoring import load_prm  # noqa: E402
from prm.search.compare import compare_at_budgets  # noqa: E402
from prm.search.plots import plot_accuracy_vs_budget  # noqa: E402
from prm.search.run import heldout_problems  # noqa: E402
from prm.training.artifacts import PRMArtifacts  # noqa: E402


def _args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--policy", default="arith-policy", help="policy name or folder")
    p.add_argument("--prm", default=None, help="PRM folder (default: models/prm/model, else a quick one)")
    p.add_argument("--problems", type=int, default=24, help="held-out problems")
    p.add_argument("--budgets", type=int, nargs="+", default=[320, 640, 1280], help="generated tokens per problem")
    p.add_argument("--m", type=int, default=4, help="expansions per beam per step; samples per sampling round")
    p.add_argument("--aggregation", default="last", help="how beams and samples are ranked (SearchConfig)")
    p.add_argument("--seeds", type=int, nargs="+", default=[0])
    p.add_argument("--plot", default=None, help="accuracy-against-budget PNG (default: none)")
    return p.parse_args()


def _prm(arg: str | None) -> Path:
    if arg:
        return Path(arg)
    shipped = PRMArtifacts.default().model
    if (shipped / "prm_card.json").exists():
        return shipped
    from benchmarks.workload import default_prm

    return default_prm(model_cache_dir() / "search-benchmark-prm", seed=0, max_steps=30)


def main() -> None:
    args = _args()
    start = time.time()
    problems = heldout_problems(args.problems)
    prm_dir = _prm(args.prm)
    scorer = load_prm(prm_dir)
    policy = resolve_model(args.policy)
    with make_backend(GenerationConfig(model=policy, seed=0)) as backend:
        result = compare_at_budgets(problems, backend, scorer, args.budgets, args.seeds, m=args.m,
                                    aggregation=args.aggregation, progress=lambda line: print(line, flush=True))
    methods, solution_tokens = result.methods, result.solution_tokens
    if args.plot:
        plot_accuracy_vs_budget(methods, args.plot, title=f"{len(problems)} problems x {len(args.seeds)} seeds")
    print(json.dumps({"budgets": args.budgets, "seeds": args.seeds, "problems": len(problems), "methods": methods,
                      "prm": str(prm_dir), "policy": str(policy), "solution_tokens": solution_tokens,
                      "aggregation": args.aggregation, "wall_s": round(time.time() - start, 1)}))


if __name__ == "__main__":
    main()
