"""Every search method at equal generated-token budgets: the comparison behind ``benchmarks/search.py`` and the
``search_comparison`` asset.

Budget: generated tokens per problem, every expansion and sample counted, kept or not. Every method gets its width
from the budget and the policy's mean solution length ``L`` (a pilot of one sample per problem at
:data:`PILOT_SEED`, not counted): best-of-N and majority vote share one pool of ``budget // L`` samples per
(budget, seed); beam search ``budget // (m * L)`` beams of ``m`` expansions; DVTS ``budget // (m * L)`` subtrees of
``m`` expansions; each at least one. The budget also caps the tree methods, and ``mean_generated_tokens`` says
what each method really spent. Accuracy pools the seeds per problem; ``accuracy_ci`` is a 95% bootstrap over
problems.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from prm.models import prompter_for
from prm.search.config import SearchConfig
from prm.search.expand import BackendExpander
from prm.search.methods import run_search
from prm.search.report import accuracy_ci, grade
from prm.search.sampling import best_of_n, majority_vote, sample_pool
from prm.tasks.records import ProblemRecord

PILOT_SEED = 99_991  # the pilot's sampling seed: apart from every seed a comparison is likely to use


@dataclass(frozen=True)
class BudgetComparison:
    """Per (method, budget) a row: ``method``, ``budget``, ``accuracy``, ``accuracy_ci``, ``n``, ``m``,
    ``mean_generated_tokens``; and the pilot's mean solution length in tokens."""

    methods: list[dict[str, Any]]
    solution_tokens: int


def compare_at_budgets(problems: Sequence[ProblemRecord], backend: Any, scorer: Any, budgets: Sequence[int],
                       seeds: Sequence[int], *, m: int = 4, aggregation: str = "last",
                       progress: Callable[[str], None] = print) -> BudgetComparison:
    """Run best-of-N, majority vote, beam search and DVTS on ``problems`` at each budget and seed (see the module
    docstring); ``backend`` is a :class:`prm.generation.GenerationBackend`, ``scorer`` a ``load_prm`` scorer."""
    if not problems or not budgets or not seeds:
        raise ValueError("compare_at_budgets needs problems, budgets and seeds (none may be empty)")
    questions, golds = [p.question for p in problems], [p.gold_answer for p in problems]
    prompter, expander = prompter_for(backend.info.model), BackendExpander(backend)
    pilot = sample_pool(questions, prompter, expander, SearchConfig(n=1, m=1, seed=PILOT_SEED))[1]
    solution_tokens = max(1, round(sum(pilot) / len(pilot)))
    correct: dict[tuple[str, int], list[list[bool]]] = {}  # (method, budget) -> per seed, per problem
    spent: dict[tuple[str, int], list[int]] = {}
    widths: dict[tuple[str, int], tuple[int, int]] = {}
    for seed in seeds:
        for budget in budgets:
            samples = max(1, budget // solution_tokens)
            sampling = SearchConfig(n=samples, m=samples, aggregation=aggregation, seed=seed)
            pool = sample_pool(questions, prompter, expander, sampling)
            runs = {"best_of_n": (sampling, best_of_n(questions, prompter, expander, scorer, sampling, pool)),
                    "majority_vote": (sampling, majority_vote(questions, prompter, expander, scorer, sampling, pool))}
            trees = max(1, budget // (m * solution_tokens))
            for method, n in (("beam_search", trees), ("dvts", trees * m)):
                config = SearchConfig(n=n, m=m, aggregation=aggregation, token_budget=budget, seed=seed)
                runs[method] = (config, run_search(method, questions, prompter, expander, scorer, config))
            for method, (config, results) in runs.items():
                key = (method, budget)
                correct.setdefault(key, []).append(grade(results, golds))
                spent.setdefault(key, []).extend(r.generated_tokens for r in results)
                widths[key] = (config.n, config.m)
                progress(f"seed {seed} budget {budget} {method}: accuracy {sum(correct[key][-1]) / len(problems):.3f}, "
                         f"mean tokens {sum(r.generated_tokens for r in results) / len(results):.0f}")
    methods = []
    for (method, budget), per_seed in correct.items():
        per_problem = [sum(row[i] for row in per_seed) / len(per_seed) for i in range(len(problems))]
        n, width = widths[(method, budget)]
        methods.append({"method": method, "budget": budget, "accuracy": sum(per_problem) / len(per_problem),
                        "accuracy_ci": list(accuracy_ci(per_problem)), "n": n, "m": width,
                        "mean_generated_tokens": sum(spent[(method, budget)]) / len(spent[(method, budget)])})
    return BudgetComparison(methods, solution_tokens)
