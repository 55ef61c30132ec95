"""One search run end to end: held-out problems (generated arithmetic, or any warehouse source's problems with a gold
answer: GSM8K, MATH, a user's file), the policy on a real generation backend, the PRM on the batched scorer, picks
graded against the gold answer by ``verifiers.grade_answers`` and an accuracy with its interval."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prm.models import prompter_for
from prm.search.config import SearchConfig
from prm.search.constants import MAX_PROBLEMS
from prm.search.expand import BackendExpander
from prm.search.methods import run_search
from prm.search.report import accuracy_ci, grade
from prm.search.types import SearchResult
from prm.tasks import ArithmeticSourceConfig, ProblemRecord, generate_arithmetic
from warehouse import connect, source_clause

if TYPE_CHECKING:
    from prm.scoring import Scorer

# Keeps search problems apart from the seeds the policy's and PRMs' training draws use (0 and small offsets);
# the 6-8 step word-problem space is large, so a repeat is rare and harmless to a comparison between methods.
_HELDOUT_SEED = 7_000


def check_problem_count(n: int) -> None:
    """Refuse a problem count no run can serve before any problem is built.

    >>> check_problem_count(100_000_000)
    Traceback (most recent call last):
    ...
    ValueError: 100000000 problems: search at most 10000 in one run (...); ...
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"{n!r} problems: search at least one problem (an int >= 1)")
    if n > MAX_PROBLEMS:
        raise ValueError(f"{n} problems: search at most {MAX_PROBLEMS} in one run (GSM8K's test split is 1,319); "
                         "split a larger evaluation into several runs with different --seed")


def heldout_problems(n: int, seed: int = 0, n_ops: Sequence[int] = (6, 8)) -> list[ProblemRecord]:
    """``n`` generated arithmetic word problems spread over ``n_ops`` (the policy slips on long ones).

    >>> [len(heldout_problems(3, n_ops=(2, 4))), heldout_problems(1)[0].split]
    [3, 'test']
    """
    check_problem_count(n)
    per_level = -(-n // len(n_ops))
    records = generate_arithmetic(ArithmeticSourceConfig(n_ops=tuple(n_ops), per_level=per_level, split="test"),
                                  seed=_HELDOUT_SEED + seed)
    # Interleave the levels, so that any first n mixes difficulties.
    by_level = [records[i * per_level : (i + 1) * per_level] for i in range(len(n_ops))]
    return [r for group in zip(*by_level, strict=False) for r in group][:n]


_PROBLEMS_SQL = """
SELECT p.problem_id, p.task, p.split, p.question, p.gold_answer, p.gold_solution, p.n_gold_steps, p.difficulty
FROM problems p WHERE trim(p.gold_answer) <> '' {source_filter} ORDER BY p.problem_id
"""


def warehouse_problems(root: str | Path, n: int, *, source: str | Sequence[str] | None = None,
                       split_of: Callable[[str, int | None], str] | None = None,
                       split: str = "test") -> list[ProblemRecord]:
    """Up to ``n`` problems of the warehouse at ``root`` that have a gold answer, from any task (``source``: one
    source, several, or None for every source), in problem-id order (a hash: no order of ingestion or difficulty).
    With ``split_of`` (``prm.training.stratified_splits`` of the PRM's training config), only the problems it places
    in ``split``: the PRM's held-out test problems, never one it was trained on. A search grades its picks against
    ``gold_answer`` with ``verifiers.grade_answers``, so a problem needs nothing else."""
    check_problem_count(n)
    source_filter, params = source_clause(source)
    cursor = connect(root).execute(_PROBLEMS_SQL.format(source_filter=source_filter), params)
    names = [d[0] for d in cursor.description]
    rows = [dict(zip(names, values, strict=True)) for values in cursor.fetchall()]
    kept = [r for r in rows if split_of is None or split_of(r["problem_id"], r["n_gold_steps"]) == split]
    if not kept:
        where = f"source {source!r}" if source else "any source"
        raise ValueError(f"the warehouse at {root} holds {len(rows)} problems with a gold answer from {where}, "
                         f"{len(kept)} of them in the PRM's {split!r} split; materialize problems of that source "
                         "(and train the PRM on it) first, or name another source")
    return [ProblemRecord(**r) for r in kept[:n]]


@dataclass(frozen=True)
class SearchSummary:
    """A method's accuracy on a problem set, its 95% bootstrap interval, what it generated and what its PRM read."""

    method: str
    n: int
    m: int
    token_budget: int | None
    problems: int
    accuracy: float
    accuracy_ci: tuple[float, float]
    mean_generated_tokens: float
    max_generated_tokens: int
    mean_prm_tokens: float  # tokens run through the PRM per problem (prm.search.scoring)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def summarize(method: str, config: SearchConfig, results: Sequence[SearchResult], golds: Sequence[str]
              ) -> SearchSummary:
    """Grade ``results`` against ``golds`` and summarise them."""
    correct = grade(results, golds)
    tokens = [r.generated_tokens for r in results]
    return SearchSummary(method, config.n, config.m, config.token_budget, len(results), sum(correct) / len(correct),
                         accuracy_ci(correct), sum(tokens) / len(tokens), max(tokens),
                         sum(r.prm_tokens for r in results) / len(results))


def search_problems(method: str, problems: Sequence[ProblemRecord], backend: Any, scorer: Scorer,
                    config: SearchConfig) -> SearchSummary:
    """Run ``method`` on ``problems`` through ``backend`` (a :class:`prm.generation.GenerationBackend`) and
    ``scorer`` (``prm.scoring.load_prm``), and grade it."""
    prompter = prompter_for(backend.info.model)
    results = run_search(method, [p.question for p in problems], prompter, BackendExpander(backend), scorer, config)
    return summarize(method, config, results, [p.gold_answer for p in problems])
