"""A PRM's step scores against first-error truth: the held-out solution type, ProcessBench F1 at a threshold chosen
on validation, and step ROC-AUC.

Pure functions over plain data (no torch, no dagster). Conventions:

* A score is the PRM's P(good) of a step, in [0, 1].
* The predicted first error is the first step whose score is below the threshold, -1 when none is. The
  threshold is chosen on the *validation* split (the one maximising ProcessBench F1) and then applied
  unchanged to test, as ProcessBench prescribes; choosing it on test would flatter the PRM. A validation
  split without a wrong or without a correct solution cannot choose one: then the head's own decision point
  :data:`UNCHOSEN_THRESHOLD` applies, and the row's detail says so (``chosen_on``). Never the test split.
* Truth follows :mod:`prm.format.labels`: steps after the first wrong one are wrong *by convention*.
  Solutions without step truth (``first_error`` None) are left out of ProcessBench F1 and ROC-AUC but
  still count in best-of-N (:mod:`prm.best_of_n`), which needs only the final answer's ``is_correct``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from prm.format import first_error_of, labels_from_first_error
from prm.metrics import first_error_accuracies, harmonic_mean, processbench_f1, roc_auc

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
