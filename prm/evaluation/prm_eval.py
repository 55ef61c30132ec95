"""PRM evaluation on held-out solutions: ProcessBench F1, step ROC-AUC, best-of-N, and two baselines.

Pure functions over plain data (no torch, no dagster). Conventions:

* A score is the PRM's P(good) of a step, in [0, 1].
* The predicted first error is the first step whose score is below the threshold, -1 when none is. The
  threshold is chosen on the *validation* split (the one maximising ProcessBench F1) and then applied
  unchanged to test, as ProcessBench prescribes; choosing it on test would flatter the PRM. A validation
  split without a wrong or without a correct solution cannot choose one: then the head's own decision point
  :data:`UNCHOSEN_THRESHOLD` applies, and the row's detail says so (``chosen_on``); likewise best-of-N falls
  back to the first of :data:`AGGREGATIONS` when no validation problem has N solutions. Never the test split.
* Truth follows :mod:`prm.format.labels`: steps after the first wrong one are wrong *by convention*.
  Solutions without step truth (``first_error`` None) are left out of ProcessBench F1 and ROC-AUC but
  still count in best-of-N, which needs only the final answer's ``is_correct``.
* Best-of-N takes each problem's first N solutions in input order and skips problems with fewer.
* Baselines score the same solutions: :data:`CONSTANT` (every step 1.0, so it never flags a step) and
  :data:`LENGTH` (a step's score falls with its position, so it knows only how long a solution is).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from prm.evaluation.metrics import first_error_accuracies, gap_closed, harmonic_mean, processbench_f1, roc_auc
from prm.format import first_error_of, labels_from_first_error

# How best-of-N picks with a PRM, in the order that breaks ties when choosing on validation: the solution whose
# aggregated score is highest, or (``vote_*``) the answer whose solutions' aggregated scores sum highest, the
# PRM-weighted majority vote of Math-Shepherd and "Lessons of Developing PRMs".
SCORE_AGGREGATIONS = ("min", "product", "last", "mean")
VOTE_PREFIX = "vote_"
AGGREGATIONS = (*SCORE_AGGREGATIONS, *(VOTE_PREFIX + h for h in ("min", "mean", "last")))
MAJORITY, RANDOM, ORACLE = "majority_vote", "random_pick", "oracle"  # best-of-N references, also model names
CONSTANT, LENGTH = "baseline:constant", "baseline:length"
DEFAULT_BON_N = 8  # issue 11's acceptance criterion is best-of-8
NEVER_FLAG = 0.0  # no score in [0, 1] is below it: the threshold that accepts every step
FLAG_ALL = math.nextafter(1.0, math.inf)  # every score in [0, 1] is below it
UNCHOSEN_THRESHOLD = 0.5  # P(good) = 0.5, where the two-class head's argmax flips: used when validation can't choose


@dataclass(frozen=True)
class ScoredSolution:
    """One held-out solution with its PRM step scores and its truth.

    >>> s = ScoredSolution.from_row({"solution_id": "s", "problem_id": "p", "scores": [0.9, 0.2],
    ...                              "step_truth": [True, False], "final_answer": "7", "is_correct": False})
    >>> s.first_error, s.n_steps
    (1, 2)
    """

    solution_id: str
    problem_id: str
    scores: tuple[float, ...]  # P(good) per step
    first_error: int | None  # exact truth: first wrong step, -1 = all good, None = unknown
    final_answer: str | None = None  # the extracted answer, normalised by the caller; None = no answer
    is_correct: bool | None = None  # final answer vs gold; None (ungradable) counts as wrong

    def __post_init__(self) -> None:
        where = f"solution {self.solution_id!r}"
        if not self.scores:
            raise ValueError(f"{where} has no step scores: a PRM scores every step; drop step-less solutions first")
        bad = [x for x in self.scores if not 0.0 <= x <= 1.0]  # NaN fails both comparisons
        if bad:
            raise ValueError(f"{where} has scores outside [0, 1] ({bad[:3]}): pass P(good), not logits")
        if self.first_error is not None and not -1 <= self.first_error < len(self.scores):
            raise ValueError(f"{where} has first_error {self.first_error} but {len(self.scores)} steps; "
                             "use -1 for a correct solution and a 0-based step index otherwise")

    @property
    def n_steps(self) -> int:
        return len(self.scores)

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> ScoredSolution:
        """From a mapping with ``scores`` and either ``first_error`` or per-step ``step_truth`` (booleans).

        ``n_steps``, when present, must equal the number of scores.
        """
        scores = tuple(float(x) for x in row["scores"])
        if row.get("n_steps") is not None and int(row["n_steps"]) != len(scores):
            raise ValueError(f"solution {row['solution_id']!r}: n_steps={row['n_steps']} but {len(scores)} scores; "
                             "score every step of the solution")
        first_error = row.get("first_error")
        if row.get("step_truth") is not None:
            from_steps = first_error_of(list(row["step_truth"]))
            if first_error is not None and from_steps != first_error:
                raise ValueError(f"solution {row['solution_id']!r}: first_error={first_error} disagrees with "
                                 f"step_truth (first wrong step {from_steps}); pass one of them")
            first_error = from_steps
        return cls(str(row["solution_id"]), str(row["problem_id"]), scores,
                   None if first_error is None else int(first_error), row.get("final_answer"), row.get("is_correct"))


def as_solutions(rows: Iterable[ScoredSolution | Mapping[str, Any]]) -> list[ScoredSolution]:
    """Rows (mappings or :class:`ScoredSolution`) as solutions; solution ids must be unique."""
    out = [r if isinstance(r, ScoredSolution) else ScoredSolution.from_row(r) for r in rows]
    seen: set[str] = set()
    for s in out:
        if s.solution_id in seen:
            raise ValueError(f"solution {s.solution_id!r} appears twice; pass each solution once")
        seen.add(s.solution_id)
    return out


# --- ProcessBench ---------------------------------------------------------------------------------------

def predict_first_error(scores: Sequence[float], threshold: float) -> int:
    """The first step whose score is below ``threshold``; -1 when none is.

    >>> predict_first_error([0.9, 0.4, 0.1], 0.5), predict_first_error([0.9, 0.6], 0.5)
    (1, -1)
    """
    return next((k for k, x in enumerate(scores) if x < threshold), -1)


def candidate_thresholds(solutions: Sequence[ScoredSolution]) -> list[float]:
    """Every distinct prediction on ``solutions``: :data:`NEVER_FLAG`, the midpoints between adjacent distinct
    scores, and :data:`FLAG_ALL`.

    >>> candidate_thresholds(as_solutions([{"solution_id": "a", "problem_id": "p", "scores": [0.2, 0.6]}]))
    [0.0, 0.4, 1.0000000000000002]
    """
    distinct = np.unique(np.fromiter((x for s in solutions for x in s.scores), dtype=float))
    return [NEVER_FLAG, *((distinct[:-1] + distinct[1:]) / 2).tolist(), FLAG_ALL]


def choose_threshold(solutions: Sequence[ScoredSolution], grid: Sequence[float] | None = None) -> float:
    """The threshold in ``grid`` (default :func:`candidate_thresholds`) with the best ProcessBench F1 on
    ``solutions``; the lowest wins a tie. Exact, and O((grid + solutions) log solutions).

    >>> val = as_solutions([{"solution_id": "w", "problem_id": "p", "scores": [0.75, 0.25], "first_error": 1},
    ...                     {"solution_id": "c", "problem_id": "q", "scores": [0.875, 0.5], "first_error": -1}])
    >>> choose_threshold(val)  # candidates 0, 0.375, 0.625, 0.8125, 1+: only 0.375 gets both right
    0.375
    """
    truth = [s for s in solutions if s.first_error is not None]
    wrong = [s for s in truth if s.first_error >= 0]
    right = [s for s in truth if s.first_error < 0]
    if not wrong or not right:
        raise ValueError(f"the validation split has {len(wrong)} wrong and {len(right)} correct solutions with "
                         "step truth; ProcessBench F1 needs both to choose a threshold")
    grid_arr = np.asarray(candidate_thresholds(truth) if grid is None else grid, dtype=float)
    # A wrong solution is matched exactly for thresholds in (score at its first error, min score before it].
    at_error = np.array([s.scores[s.first_error] for s in wrong])
    before = np.array([min(s.scores[:s.first_error], default=math.inf) for s in wrong])
    hit = at_error < before
    starts, ends = np.sort(at_error[hit]), np.sort(before[hit])
    matched = np.searchsorted(starts, grid_arr, side="left") - np.searchsorted(ends, grid_arr, side="left")
    # A correct solution is accepted while the threshold is at most its lowest score.
    lowest = np.sort([min(s.scores) for s in right])
    accepted = len(right) - np.searchsorted(lowest, grid_arr, side="left")
    a, b = matched / len(wrong), accepted / len(right)
    f1 = np.divide(2 * a * b, a + b, out=np.zeros_like(a), where=(a + b) > 0)
    return float(grid_arr[int(np.argmax(f1))])


@dataclass(frozen=True)
class ProcessBenchResult:
    """ProcessBench metrics on test at the threshold chosen on validation."""

    threshold: float
    chosen_on: str  # "validation", "fixed" (given), or why validation could not choose it
    val_f1: float | None  # at ``threshold``, on the split that chose it
    f1: float | None
    first_error_acc: float | None  # exact first-error match on wrong test solutions
    correct_acc: float | None  # correct test solutions accepted
    n_wrong: int
    n_correct: int


def evaluate_processbench(val: Sequence[ScoredSolution], test: Sequence[ScoredSolution], *,
                          grid: Sequence[float] | None = None, threshold: float | None = None) -> ProcessBenchResult:
    """Choose the threshold on ``val`` (or take ``threshold`` as given) and score ``test`` with it.

    >>> val = as_solutions([{"solution_id": "w", "problem_id": "p", "scores": [0.75, 0.25], "first_error": 1},
    ...                     {"solution_id": "c", "problem_id": "q", "scores": [0.875, 0.5], "first_error": -1}])
    >>> test = as_solutions([{"solution_id": "w2", "problem_id": "r", "scores": [0.25], "first_error": 0},
    ...                      {"solution_id": "c2", "problem_id": "t", "scores": [0.5], "first_error": -1}])
    >>> r = evaluate_processbench(val, test)
    >>> r.threshold, r.val_f1, r.first_error_acc, r.correct_acc
    (0.375, 1.0, 1.0, 1.0)
    """
    if threshold is not None:
        chosen, chosen_on = threshold, "fixed"
    elif (why := _cannot_choose(val)) is None:
        chosen, chosen_on = choose_threshold(val, grid), "validation"
    else:
        chosen, chosen_on = UNCHOSEN_THRESHOLD, why
    val_f1 = processbench_f1(*first_error_predictions(val, chosen))
    preds, truth = first_error_predictions(test, chosen)
    fe_acc, ok_acc = first_error_accuracies(preds, truth)
    n_wrong = sum(fe >= 0 for fe in truth.values())
    return ProcessBenchResult(chosen, chosen_on, val_f1, harmonic_mean(fe_acc, ok_acc), fe_acc, ok_acc,
                              n_wrong, len(truth) - n_wrong)


def _cannot_choose(val: Sequence[ScoredSolution]) -> str | None:
    """Why ``val`` cannot choose a threshold (it lacks wrong or correct solutions with truth), or None."""
    wrong = sum(s.first_error >= 0 for s in val if s.first_error is not None)
    right = sum(s.first_error < 0 for s in val if s.first_error is not None)
    if wrong and right:
        return None
    return (f"default {UNCHOSEN_THRESHOLD}: validation has {wrong} wrong and {right} correct solutions with "
            "step truth")


def first_error_predictions(solutions: Sequence[ScoredSolution], threshold: float
                            ) -> tuple[dict[str, int], dict[str, int]]:
    """(predicted, true) first wrong step per solution with exact truth, the PRM's step scores cut at ``threshold``."""
    truth = {s.solution_id: s.first_error for s in solutions if s.first_error is not None}
    preds = {s.solution_id: predict_first_error(s.scores, threshold) for s in solutions if s.solution_id in truth}
    return preds, truth


# --- step ROC-AUC ---------------------------------------------------------------------------------------

def step_auc(solutions: Sequence[ScoredSolution], *, all_steps: bool = False) -> tuple[float | None, int]:
    """(ROC-AUC, steps counted): wrong step = positive class, scored by 1 - P(good).

    By default only steps up to and including the first wrong one count: later steps are wrong by
    convention (:mod:`prm.format.labels`), not by anything in them, and would reward a PRM for merely
    staying low after an error. ``all_steps=True`` counts them too.

    >>> sols = as_solutions([{"solution_id": "a", "problem_id": "p", "scores": [0.9, 0.3, 0.8], "first_error": 1},
    ...                      {"solution_id": "b", "problem_id": "q", "scores": [0.7, 0.6], "first_error": -1}])
    >>> step_auc(sols), step_auc(sols, all_steps=True)  # the by-convention step 2 (scored 0.8) costs 1/3
    ((1.0, 4), (0.6666666666666666, 5))
    """
    positive: list[bool] = []
    risk: list[float] = []
    for s in solutions:
        if s.first_error is None:
            continue
        good = labels_from_first_error(s.n_steps, s.first_error)
        last = s.n_steps if all_steps or s.first_error < 0 else s.first_error + 1
        positive += [not ok for ok in good[:last]]
        risk += [1.0 - x for x in s.scores[:last]]
    return roc_auc(positive, risk), len(positive)


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
    """:func:`evaluate_best_of_n` at each ``n`` (the input of :func:`prm.evaluation.plots.plot_best_of_n`)."""
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


__all__ = ["AGGREGATIONS", "CONSTANT", "LENGTH", "MAJORITY", "ORACLE", "RANDOM", "BestOfN", "ProcessBenchResult",
           "ScoredSolution", "aggregate", "as_solutions", "bon_accuracies", "bon_curve", "choose_threshold",
           "constant_baseline", "evaluate_best_of_n", "evaluate_processbench", "length_baseline", "majority_pick",
           "predict_first_error", "step_auc"]
