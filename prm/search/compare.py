"""Every search method at equal generated-token budgets: the comparison behind ``benchmarks/search.py`` and the
``search_comparison`` asset.

Budget: generated tokens per problem, every expansion and sample counted, kept or not. Every method gets its width
from the budget and the policy's mean solution length ``L`` (a pilot of one sample per problem at
:data:`PILOT_SEED`, not counted): best-of-N and majority vote share one pool of ``budget // L`` samples per
(budget, seed); beam search ``budget // (m * L)`` beams of ``m`` expansions; DVTS ``budget // (m * L)`` subtrees of
``m`` expansions; each at least one. The PRM-weighted vote picks from best-of-N's scored samples. The budget
also caps the tree methods, and ``mean_generated_tokens`` says what each method really spent, ``prm_tokens`` what
its PRM read (per problem, means over seeds). Accuracy pools the seeds per problem; ``accuracy_ci`` is a 95%
bootstrap over problems; ``vs_majority`` and ``vs_best_of_n`` are each method's paired difference from that baseline
on the same problems and seeds at the same budget, with a 95% paired bootstrap over problems
(``prm.metrics.stats.paired_bootstrap_diff_ci``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from prm.metrics import paired_bootstrap_diff_ci
from prm.models import prompter_for
from prm.search.config import SearchConfig
from prm.search.constants import MAX_M
from prm.search.expand import BackendExpander
from prm.search.methods import run_search
from prm.search.report import accuracy_ci, grade
from prm.search.sampling import best_of_n, majority_vote, sample_pool, score_pool, weighted_vote
from prm.settings import check_count, check_seed
from prm.tasks import ProblemRecord

if TYPE_CHECKING:
    from prm.scoring import Scorer

PILOT_SEED = 99_991  # the pilot's sampling seed: apart from every seed a comparison is likely to use


@dataclass(frozen=True)
class BudgetComparison:
    """Per (method, budget) a row: ``method``, ``budget``, ``accuracy``, ``accuracy_ci``, ``n``, ``m``,
    ``generated_tokens`` and ``prm_tokens`` (means per problem; ``mean_generated_tokens`` is the first again, the
    name plots read), ``seeds``; the pilot's mean solution length in tokens; and per (method, budget) but the
    baseline's, rows ``method``, ``budget``, ``diff``, ``diff_ci`` against majority vote and best-of-N."""

    methods: list[dict[str, Any]]
    solution_tokens: int
    vs_majority: list[dict[str, Any]] = field(default_factory=list)
    vs_best_of_n: list[dict[str, Any]] = field(default_factory=list)


def paired_differences(per_problem: dict[tuple[str, int], list[float]], baseline: str) -> list[dict[str, Any]]:
    """Each method's mean per-problem correctness minus ``baseline``'s at the same budget, on the same problems,
    with its 95% paired bootstrap interval.

    >>> rows = paired_differences({("a", 1): [1.0, 1.0], ("b", 1): [0.0, 1.0]}, "b")
    >>> rows == [{"method": "a", "budget": 1, "diff": 0.5, "diff_ci": [0.0, 1.0]}]
    True
    """
    out = []
    for (method, budget), values in per_problem.items():
        base = per_problem.get((baseline, budget))
        if method == baseline or base is None:
            continue
        low, high = paired_bootstrap_diff_ci(values, base)
        out.append({"method": method, "budget": budget, "diff": (sum(values) - sum(base)) / len(values),
                    "diff_ci": [low, high]})
    return out


def compare_at_budgets(problems: Sequence[ProblemRecord], backend: Any, scorer: Scorer, budgets: Sequence[int],
                       seeds: Sequence[int], *, m: int = 4, aggregation: str = "last", prefix_cache: bool = True,
                       progress: Callable[[str], None] = print) -> BudgetComparison:
    """Run best-of-N, majority vote, beam search and DVTS on ``problems`` at each budget and seed (see the module
    docstring); ``backend`` is a :class:`prm.generation.GenerationBackend`, ``scorer`` a ``load_prm`` scorer;
    ``prefix_cache`` as :class:`SearchConfig`'s (False: every candidate rescored in full, the same picks)."""
    if not problems or not budgets or not seeds:
        raise ValueError("compare_at_budgets needs problems, budgets and seeds (none may be empty)")
    # Before the pilot samples anything: the tree widths below divide by m.
    check_count("m", m, high=MAX_M, why="expansions per beam per step")
    for seed in seeds:
        check_seed("seed", seed)
    questions, golds = [p.question for p in problems], [p.gold_answer for p in problems]
    prompter, expander = prompter_for(backend.info.model), BackendExpander(backend)
    pilot = sample_pool(questions, prompter, expander, SearchConfig(n=1, m=1, seed=PILOT_SEED))[1]
    solution_tokens = max(1, round(sum(pilot) / len(pilot)))
    correct: dict[tuple[str, int], list[list[bool]]] = {}  # (method, budget) -> per seed, per problem
    spent: dict[tuple[str, int], list[int]] = {}
    read: dict[tuple[str, int], list[int]] = {}
    widths: dict[tuple[str, int], tuple[int, int]] = {}
    for seed in seeds:
        for budget in budgets:
            samples = max(1, budget // solution_tokens)
            sampling = SearchConfig(n=samples, m=samples, aggregation=aggregation, seed=seed, prefix_cache=prefix_cache)
            pool = sample_pool(questions, prompter, expander, sampling)
            scored = score_pool(questions, prompter, expander, scorer, sampling, pool)
            runs = {"best_of_n": (sampling, best_of_n(questions, prompter, expander, scorer, sampling, scored=scored)),
                    "weighted_vote": (sampling, weighted_vote(questions, prompter, expander, scorer, sampling,
                                                              scored=scored)),
                    "majority_vote": (sampling, majority_vote(questions, prompter, expander, scorer, sampling, pool))}
            trees = max(1, budget // (m * solution_tokens))
            for method, n in (("beam_search", trees), ("dvts", trees * m)):
                config = SearchConfig(n=n, m=m, aggregation=aggregation, token_budget=budget, seed=seed,
                                      prefix_cache=prefix_cache)
                runs[method] = (config, run_search(method, questions, prompter, expander, scorer, config))
            for method, (config, results) in runs.items():
                key = (method, budget)
                correct.setdefault(key, []).append(grade(results, golds))
                spent.setdefault(key, []).extend(r.generated_tokens for r in results)
                read.setdefault(key, []).extend(r.prm_tokens for r in results)
                widths[key] = (config.n, config.m)
                progress(f"seed {seed} budget {budget} {method}: accuracy {sum(correct[key][-1]) / len(problems):.3f}, "
                         f"mean tokens {sum(r.generated_tokens for r in results) / len(results):.0f}, "
                         f"PRM tokens {sum(r.prm_tokens for r in results) / len(results):.0f}")
    methods, per_problem = [], {}
    for (method, budget), per_seed in correct.items():
        key = (method, budget)
        per_problem[key] = [sum(row[i] for row in per_seed) / len(per_seed) for i in range(len(problems))]
        n, width = widths[key]
        generated = sum(spent[key]) / len(spent[key])
        methods.append({"method": method, "budget": budget, "accuracy": sum(per_problem[key]) / len(problems),
                        "accuracy_ci": list(accuracy_ci(per_problem[key])), "n": n, "m": width,
                        "generated_tokens": generated, "prm_tokens": sum(read[key]) / len(read[key]),
                        "mean_generated_tokens": generated, "seeds": list(seeds)})
    return BudgetComparison(methods, solution_tokens, paired_differences(per_problem, "majority_vote"),
                            paired_differences(per_problem, "best_of_n"))
