"""Step sensitivity: does a PRM read the step it scores?

Sibling steps are two continuations of the same prefix of one problem where exact truth says one is right
and the other is the first wrong step. A PRM that reads steps scores the right sibling higher; a prior over
position and length cannot tell them apart (both sit at the same position after the same prefix). The metric
is the share of distinct sibling pairs where the right step scores higher, ties counting one half.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from prm.metrics.stats import problem_bootstrap_ci


@dataclass(frozen=True)
class SiblingPair:
    """One prefix of one problem continued by a right step and by a wrong one (the first wrong step)."""

    problem_id: str
    prefix: tuple[str, ...]
    right: str
    wrong: str


Siblings = tuple[Sequence[SiblingPair], Sequence[float], Sequence[float]]  # pairs, right and wrong scores


@dataclass(frozen=True)
class Sensitivity:
    """The share of sibling pairs ordered right above wrong, its 95% interval over problems, and the counts."""

    value: float | None
    ci: tuple[float, float] | None
    n_pairs: int
    n_problems: int


def _is_right_at(solution: Mapping[str, Any], k: int) -> bool:
    first = solution["first_error"]
    return first is not None and (first < 0 or first > k)


def sibling_pairs(solutions: Sequence[Mapping[str, Any]]) -> list[SiblingPair]:
    """Distinct sibling pairs among ``solutions`` (mappings with ``problem_id``, ``steps`` and ``first_error``,
    -1 for all right, None for unknown).

    >>> sols = [{"problem_id": "p", "steps": ["1+1 = 2", "2+3 = 5"], "first_error": -1},
    ...         {"problem_id": "p", "steps": ["1+1 = 2", "2+3 = 6"], "first_error": 1},
    ...         {"problem_id": "p", "steps": ["1+1 = 3", "3+3 = 6"], "first_error": 0}]
    >>> [(p.prefix, p.right, p.wrong) for p in sibling_pairs(sols)]
    [((), '1+1 = 2', '1+1 = 3'), (('1+1 = 2',), '2+3 = 5', '2+3 = 6')]
    """
    by_problem: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for s in solutions:
        if s["first_error"] is not None and s["steps"]:
            by_problem[s["problem_id"]].append(s)
    pairs: dict[tuple, SiblingPair] = {}
    for pid, group in by_problem.items():
        for wrong in group:
            k = wrong["first_error"]
            if k < 0:
                continue
            prefix = tuple(wrong["steps"][:k])
            for right in group:
                if len(right["steps"]) > k and tuple(right["steps"][:k]) == prefix and _is_right_at(right, k):
                    key = (pid, prefix, right["steps"][k], wrong["steps"][k])
                    pairs.setdefault(key, SiblingPair(*key))
    return sorted(pairs.values(), key=lambda p: (p.problem_id, len(p.prefix), p.prefix, p.right, p.wrong))


def step_sensitivity(pairs: Sequence[SiblingPair], right_scores: Sequence[float], wrong_scores: Sequence[float],
                     *, seed: int = 0) -> Sensitivity:
    """The share of ``pairs`` whose right step outscores the wrong one (ties 1/2), with a 95% bootstrap interval
    over problems (a problem's pairs are resampled together).

    >>> pairs = [SiblingPair("p", (), "a", "b"), SiblingPair("p", ("a",), "c", "d"), SiblingPair("q", (), "e", "f")]
    >>> s = step_sensitivity(pairs, [0.9, 0.5, 0.3], [0.1, 0.5, 0.7])
    >>> s.value, s.n_pairs, s.n_problems
    (0.5, 3, 2)
    """
    if not len(pairs) == len(right_scores) == len(wrong_scores):
        raise ValueError(f"{len(pairs)} pairs but {len(right_scores)} right and {len(wrong_scores)} wrong scores; "
                         "score both siblings of every pair")
    return pooled_sensitivity([(pairs, right_scores, wrong_scores)], seed=seed)


def pooled_sensitivity(runs: Sequence[Siblings], *, seed: int = 0) -> Sensitivity:
    """Step sensitivity over several seeds' PRMs (pairs, right scores, wrong scores per seed): the share over
    every seed's pairs, its interval resampling problems with all seeds' pairs of a problem together."""
    per_problem = _outcomes(runs)
    if not per_problem:
        return Sensitivity(None, None, 0, 0)
    groups = list(per_problem.values())
    return Sensitivity(_pooled_share(groups), problem_bootstrap_ci(groups, _pooled_share, seed=seed),
                       sum(map(len, groups)), len(groups))


def paired_sensitivity_difference(a: Sequence[Siblings], b: Sequence[Siblings], *, seed: int = 0
                                  ) -> tuple[float | None, tuple[float, float] | None]:
    """Pooled step sensitivity of scorer ``a`` minus scorer ``b`` (each: pairs, right and wrong scores per seed)
    on the problems both have pairs in, with its paired 95% interval over those problems.

    >>> pairs = [SiblingPair("p", (), "a", "b"), SiblingPair("q", (), "c", "d")]
    >>> paired_sensitivity_difference([(pairs, [0.9, 0.8], [0.1, 0.2])], [(pairs, [0.5, 0.5], [0.5, 0.5])])
    (0.5, (0.5, 0.5))
    """
    oa, ob = _outcomes(a), _outcomes(b)
    problems = [(oa[p], ob[p]) for p in sorted(oa.keys() & ob.keys())]

    def diff(ps: list[tuple[list[float], list[float]]]) -> float:
        return _pooled_share([x for x, _ in ps]) - _pooled_share([y for _, y in ps])

    return (diff(problems), problem_bootstrap_ci(problems, diff, seed=seed)) if problems else (None, None)


def _outcomes(runs: Sequence[Siblings]) -> dict[str, list[float]]:
    """Per problem, 1 / 0.5 / 0 for each pair of every seed whose right step scores above / level / below."""
    per_problem: dict[str, list[float]] = defaultdict(list)
    for pairs, right, wrong in runs:
        for pair, r, w in zip(pairs, right, wrong, strict=True):
            per_problem[pair.problem_id].append(1.0 if r > w else 0.5 if r == w else 0.0)
    return per_problem


def _pooled_share(groups: list[list[float]]) -> float:
    return sum(map(sum, groups)) / sum(map(len, groups))


def score_pairs(score: Any, questions: Mapping[str, str], pairs: Sequence[SiblingPair]
                ) -> tuple[list[float], list[float]]:
    """(right, wrong) scores of each pair's sibling step, from ``score(items) -> list[list[float]]`` over
    ``(question, steps)`` items (a scorer's ``score_batch``): one batched call for every sibling."""
    items = [(questions[p.problem_id], [*p.prefix, step]) for p in pairs for step in (p.right, p.wrong)]
    scores = [s[-1] for s in score(items)] if items else []
    return scores[0::2], scores[1::2]
