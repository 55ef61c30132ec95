"""Best-of-N with a PRM on held-out solutions: how a pick aggregates step scores, the references that need no PRM
(majority vote, a random pick, the oracle), the aggregation chosen on validation, and two baseline scorers.

Pure functions over plain data (no torch, no dagster). Conventions:

* Best-of-N takes each problem's first N solutions in input order and skips problems with fewer; it falls back to
  the first of :data:`AGGREGATIONS` when no validation problem has N solutions. Never the test split.
* Baselines score the same solutions: :data:`CONSTANT` (every step 1.0, so it never flags a step) and
  :data:`LENGTH` (a step's score falls with its position, so it knows only how long a solution is).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

# as_solutions builds the doctests' input.
from prm.first_error import ScoredSolution, as_solutions  # noqa: F401
from prm.metrics import gap_closed

# How best-of-N picks with a PRM, in the order that breaks ties when choosing on validation: the solution whose
# aggregated score is highest, or (``vote_*``) the answer whose solutions' aggregated scores sum highest, the
# PRM-weighted majority vote of Math-Shepherd and "Lessons of Developing PRMs".
SCORE_AGGREGATIONS = ("min", "product", "last", "mean")
VOTE_PREFIX = "vote_"
AGGREGATIONS = (*SCORE_AGGREGATIONS, *(VOTE_PREFIX + h for h in ("min", "mean", "last")))
MAJORITY, RANDOM, ORACLE = "majority_vote", "random_pick", "oracle"  # best-of-N references, also model names
CONSTANT, LENGTH = "baseline:constant", "baseline:length"
DEFAULT_BON_N = 8  # issue 11's acceptance criterion is best-of-8


# --- best-of-N ------------------------------------------------------------------------------------------

def aggregate(scores: Sequence[float], how: str) -> float:
    """A solution's score from its step scores: ``min``, ``product``, ``last`` or ``mean``.

    ``product`` returns the sum of log scores: the same order as the product, without underflow to 0 on
    long solutions (a zero step gives -inf).

    >>> aggregate([0.5, 0.25], "min"), aggregate([0.5, 0.25], "last"), aggregate([0.5, 0.25], "mean")
    (0.25, 0.25, 0.375)
    >>> round(math.exp(aggregate([0.5, 0.25], "product")), 9)
    0.125
    """
    if how == "min":
        return min(scores)
    if how == "product":
        return sum(math.log(x) if x > 0 else -math.inf for x in scores)
    if how == "last":
        return scores[-1]
    if how == "mean":
        return sum(scores) / len(scores)
    raise ValueError(f"unknown aggregation {how!r}; choose one of {SCORE_AGGREGATIONS}")


def majority_pick(solutions: Sequence[ScoredSolution]) -> ScoredSolution:
    """The first solution with the most frequent final answer; the answer seen first wins a tie. Solutions
    without an answer do not vote; when none has one, the first solution.

    >>> sols = as_solutions([{"solution_id": i, "problem_id": "p", "scores": [1.0], "final_answer": a}
    ...                      for i, a in zip("abcd", ["3", "5", "5", "3"])])
    >>> majority_pick(sols).solution_id
    'a'
    """
    votes: dict[str, int] = defaultdict(int)
    first: dict[str, ScoredSolution] = {}
    for s in solutions:
        if s.final_answer is not None:
            votes[s.final_answer] += 1
            first.setdefault(s.final_answer, s)
    if not votes:
        return solutions[0]
    return first[max(votes, key=votes.__getitem__)]  # max keeps the first of equal counts; dicts keep order


def weighted_vote_pick(solutions: Sequence[ScoredSolution], how: str) -> ScoredSolution:
    """The first solution of the answer whose solutions' ``aggregate(scores, how)`` sum highest (scores are
    probabilities, so ``how`` is ``min``, ``mean`` or ``last``); as :func:`majority_pick` for no answers.

    >>> sols = as_solutions([{"solution_id": i, "problem_id": "p", "scores": [x], "final_answer": a}
    ...                      for i, a, x in zip("abc", ["3", "5", "5"], [0.9, 0.3, 0.4])])
    >>> weighted_vote_pick(sols, "min").solution_id, majority_pick(sols).solution_id
    ('a', 'b')
    """
    weight: dict[str, float] = defaultdict(float)
    first: dict[str, ScoredSolution] = {}
    for s in solutions:
        if s.final_answer is not None and s.scores:
            weight[s.final_answer] += aggregate(s.scores, how)
            first.setdefault(s.final_answer, s)
    if not weight:
        return majority_pick(solutions)
    return first[max(weight, key=weight.__getitem__)]


def _pick(pool: Sequence[ScoredSolution], how: str) -> ScoredSolution:
    if how.startswith(VOTE_PREFIX):
        return weighted_vote_pick(pool, how.removeprefix(VOTE_PREFIX))
    keys = [aggregate(s.scores, how) for s in pool]
    return pool[keys.index(max(keys))]


def bon_accuracies(solutions: Sequence[ScoredSolution], n: int) -> tuple[dict[str, float], int]:
    """(accuracy per method, problems counted) of best-of-``n`` over each problem's first ``n`` solutions.

    Methods: each of :data:`AGGREGATIONS` (the first of equal picks), :data:`MAJORITY`,
    :data:`RANDOM` (the exact expected accuracy of a uniform pick: the mean correctness) and :data:`ORACLE`
    (pass@n: any solution correct).
    """
    groups = _by_problem(solutions)
    pools = [g[:n] for g in groups.values() if len(g) >= n]
    if n < 1 or not pools:
        most = max((len(g) for g in groups.values()), default=0)
        raise ValueError(f"best-of-{n} needs problems with at least {n} solutions (the most here: {most}); "
                         "lower n or sample more solutions per problem")
    totals = dict.fromkeys((*AGGREGATIONS, MAJORITY, RANDOM, ORACLE), 0.0)
    for pool in pools:
        ok = [bool(s.is_correct) for s in pool]
        for how in AGGREGATIONS:
            totals[how] += bool(_pick(pool, how).is_correct)
        totals[MAJORITY] += bool(majority_pick(pool).is_correct)
        totals[RANDOM] += sum(ok) / len(ok)
        totals[ORACLE] += any(ok)
    return {m: v / len(pools) for m, v in totals.items()}, len(pools)


def _by_problem(solutions: Sequence[ScoredSolution]) -> dict[str, list[ScoredSolution]]:
    groups: dict[str, list[ScoredSolution]] = defaultdict(list)
    for s in solutions:
        groups[s.problem_id].append(s)
    return groups


@dataclass(frozen=True)
class BestOfN:
    """Best-of-``n`` on test, with the aggregation chosen on validation."""

    n: int
    n_problems: int  # test problems with at least n solutions
    accuracy: Mapping[str, float]  # test accuracy per aggregation, MAJORITY, RANDOM and ORACLE
    chosen: str  # the aggregation with the best validation accuracy
    val_accuracy: Mapping[str, float | None]  # None: no validation problem has n solutions

    @property
    def prm(self) -> float:
        """Test accuracy of the chosen aggregation."""
        return self.accuracy[self.chosen]

    @property
    def gap_closed(self) -> float | None:
        """Share of the majority-to-oracle gap the chosen aggregation closes (None: no gap)."""
        return gap_closed(self.prm, self.accuracy[MAJORITY], self.accuracy[ORACLE])


def evaluate_best_of_n(val: Sequence[ScoredSolution], test: Sequence[ScoredSolution],
                       n: int = DEFAULT_BON_N) -> BestOfN:
    """Choose the aggregation on ``val`` (the first of :data:`AGGREGATIONS` wins a tie; the first outright when
    no validation problem has ``n`` solutions), report on ``test``."""
    if any(len(g) >= n for g in _by_problem(val).values()):
        val_acc, _ = bon_accuracies(val, n)
        chosen = max(AGGREGATIONS, key=val_acc.__getitem__)
        val_accuracy: dict[str, float | None] = {h: val_acc[h] for h in AGGREGATIONS}
    else:
        chosen, val_accuracy = AGGREGATIONS[0], dict.fromkeys(AGGREGATIONS)
    test_acc, n_problems = bon_accuracies(test, n)
    return BestOfN(n, n_problems, test_acc, chosen, val_accuracy)


def bon_curve(val: Sequence[ScoredSolution], test: Sequence[ScoredSolution],
              ns: Sequence[int] = (1, 2, 4, 8)) -> list[BestOfN]:
    """:func:`evaluate_best_of_n` at each ``n`` (the input of :func:`prm.reports.plot_best_of_n`)."""
    return [evaluate_best_of_n(val, test, n) for n in ns]


# --- baselines ------------------------------------------------------------------------------------------

def constant_baseline(solutions: Sequence[ScoredSolution]) -> list[ScoredSolution]:
    """Every step scored 1.0: flags no step, so it accepts every solution (use with ``threshold=NEVER_FLAG``)."""
    return [replace(s, scores=(1.0,) * s.n_steps) for s in solutions]


def length_baseline(solutions: Sequence[ScoredSolution]) -> list[ScoredSolution]:
    """Step ``k`` scored ``1 / (k + 2)``: a threshold then flags step j of every solution longer than j, and
    best-of-N picks the shortest solution. It sees only lengths and positions.

    >>> length_baseline(as_solutions([{"solution_id": "a", "problem_id": "p", "scores": [0.9, 0.9, 0.9]}]))[0].scores
    (0.5, 0.3333333333333333, 0.25)
    """
    return [replace(s, scores=tuple(1.0 / (k + 2) for k in range(s.n_steps))) for s in solutions]
