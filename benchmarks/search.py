"""PRM-guided search at equal generated-token budgets: best-of-N, majority vote, step-level beam search and DVTS.

Run: ``.venv/bin/python benchmarks/search.py [--prm DIR] [--problems 24] [--budgets 320 640 1280] [--seeds 0 1]``

Held-out generated arithmetic word problems (6 and 8 operations, ``prm.search.run.heldout_problems``), the shipped
policy (``arith-policy``) on a real vLLM engine, and a PRM on the batched scorer: ``--prm DIR``, else
``models/prm/model`` (the ``prm_model`` asset's) when it exists, else one trained here for a few steps
(``benchmarks/workload.py``'s ``default_prm``).

Budget: generated tokens per problem, every expansion and sample counted, kept or not. Every method gets its width
from the budget and the policy's mean solution length ``L`` (measured on a pilot of one sample per problem, at a
seed no method uses, not counted): best-of-N and majority vote share one pool of ``budget // L`` samples per
(budget, seed); beam search ``budget // (m * L)`` beams of ``m`` expansions; DVTS ``budget // (m * L)`` subtrees of
``m`` expansions; each at least one. The budget also caps the tree methods (no round starts once it is spent, so
they overshoot by at most one round), and ``mean_generated_tokens`` says what each method really spent.

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

from prm.format import Prompter  # noqa: E402
from prm.generation import GenerationConfig, make_backend  # noqa: E402
from prm.models import model_cache_dir, resolve_model  # noqa: E402
from prm.scoring import load_prm  # noqa: E402
from prm.search import BackendExpander, SearchConfig, accuracy_ci, grade, run_search  # noqa: E402
from prm.search.plots import plot_accuracy_vs_budget  # noqa: E402
from prm.search.run import heldout_problems  # noqa: E402
from prm.search.sampling import best_of_n, majority_vote, sample_pool  # noqa: E402

PILOT_SEED = 99_991  # the pilot's sampling seed: apart from every --seeds value a run is likely to use


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
    shipped = model_cache_dir() / "prm" / "model"
    if (shipped / "prm_card.json").exists():
        return shipped
    from benchmarks.workload import default_prm

    return default_prm(model_cache_dir() / "search-benchmark-prm", seed=0, max_steps=30)


def main() -> None:
    args = _args()
    start = time.time()
    problems = heldout_problems(args.problems)
    questions, golds = [p.question for p in problems], [p.gold_answer for p in problems]
    prm_dir = _prm(args.prm)
    scorer = load_prm(prm_dir)
    policy = resolve_model(args.policy)
    correct: dict[tuple[str, int], list[list[bool]]] = {}  # (method, budget) -> per seed, per problem
    spent: dict[tuple[str, int], list[int]] = {}
    widths: dict[tuple[str, int], tuple[int, int]] = {}
    with make_backend(GenerationConfig(model=policy, seed=0)) as backend:
        prompter, expander = Prompter(backend.info.model), BackendExpander(backend)
        pilot = sample_pool(questions, prompter, expander, SearchConfig(n=1, m=1, seed=PILOT_SEED))[1]
        solution_tokens = max(1, round(sum(pilot) / len(pilot)))
        for seed in args.seeds:
            for budget in args.budgets:
                samples = max(1, budget // solution_tokens)
                sampling = SearchConfig(n=samples, m=samples, aggregation=args.aggregation, seed=seed)
                pool = sample_pool(questions, prompter, expander, sampling)
                runs = {"best_of_n": (sampling, best_of_n(questions, prompter, expander, scorer, sampling, pool)),
                        "majority_vote": (sampling, majority_vote(questions, prompter, expander, scorer, sampling,
                                                                  pool))}
                trees = max(1, budget // (args.m * solution_tokens))
                for method, n in (("beam_search", trees), ("dvts", trees * args.m)):
                    config = SearchConfig(n=n, m=args.m, aggregation=args.aggregation, token_budget=budget, seed=seed)
                    runs[method] = (config, run_search(method, questions, prompter, expander, scorer, config))
                for method, (config, results) in runs.items():
                    key = (method, budget)
                    correct.setdefault(key, []).append(grade(results, golds))
                    spent.setdefault(key, []).extend(r.generated_tokens for r in results)
                    widths[key] = (config.n, config.m)
                    acc = sum(correct[key][-1]) / len(problems)
                    print(f"seed {seed} budget {budget} {method}: accuracy {acc:.3f}, mean tokens "
                          f"{sum(r.generated_tokens for r in results) / len(results):.0f}", flush=True)
    methods = []
    for (method, budget), per_seed in correct.items():
        per_problem = [sum(seed_row[i] for seed_row in per_seed) / len(per_seed) for i in range(len(problems))]
        n, m = widths[(method, budget)]
        methods.append({"method": method, "budget": budget, "accuracy": sum(per_problem) / len(per_problem),
                        "accuracy_ci": list(accuracy_ci(per_problem)),
                        "n": n, "m": m,
                        "mean_generated_tokens": sum(spent[(method, budget)]) / len(spent[(method, budget)])})
    if args.plot:
        plot_accuracy_vs_budget(methods, args.plot, title=f"{len(problems)} problems x {len(args.seeds)} seeds")
    print(json.dumps({"budgets": args.budgets, "seeds": args.seeds, "problems": len(problems), "methods": methods,
                      "prm": str(prm_dir), "policy": str(policy), "solution_tokens": solution_tokens,
                      "aggregation": args.aggregation, "wall_s": round(time.time() - start, 1)}))


if __name__ == "__main__":
    main()
