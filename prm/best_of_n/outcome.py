"""Outcome-level evaluation: what a gold answer alone supports, where no step truth exists.

GSM8K and MATH give each problem a gold final answer, never the first wrong step of a sampled solution. A PRM is
still judged there by how it picks among a problem's first N solutions, each graded against the gold answer
(``is_correct``; ungradable or no answer counts as wrong): best-of-N (the solution whose aggregated score is
highest), the PRM-weighted vote (the answer whose solutions' scores sum highest; Math-Shepherd, "Lessons of
Developing PRMs") and, as references that need no PRM, majority vote, a uniform random pick and the oracle
(pass@N). Each figure comes with a 95% percentile-bootstrap interval over test problems, and the PRM's picks
with their paired gain over majority vote on the same problems.

Step metrics need exact step truth (:mod:`prm.first_error.truth`).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from prm.best_of_n.intervals import bon_correct
from prm.best_of_n.picks import AGGREGATIONS, MAJORITY, ORACLE, RANDOM, VOTE_PREFIX, _by_problem, bon_accuracies
from prm.first_error import ScoredSolution
from prm.metrics import bootstrap_mean_ci, paired_bootstrap_diff_ci

VOTES = tuple(h for h in AGGREGATIONS if h.startswith(VOTE_PREFIX))  # the PRM-weighted votes, tie order kept
REFERENCES = (MAJORITY, RANDOM, ORACLE)
# A plain decimal number, thousands separators allowed: linear (each branch consumes a digit or a fixed separator).
_PLAIN_NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")
_MAX_NUMBER_CHARS = 40  # longer "numbers" are keyed as text, never parsed


def answer_key(answer: str | None) -> str | None:
    """The form a vote groups answers by: a plain number by its exact value (``1,234``, ``1234.0`` and ``$1234$``
    are one answer), anything else stripped of spaces and ``$``; None for no answer. Grading stays with
    ``verifiers.grade_answers``; this only decides which answers are the same vote.

    >>> [answer_key(a) for a in ("1,234", " 1234.0 ", "$1234$", "0.50", "x+1", "$ $", None)]
    ['1234', '1234', '1234', '1/2', 'x+1', None, None]
    """
    if answer is None:
        return None
    text = answer.strip().strip("$").strip()
    if len(text) <= _MAX_NUMBER_CHARS and _PLAIN_NUMBER.fullmatch(text):
        return str(Fraction(text.replace(",", "")))
    return text or None


@dataclass(frozen=True)
class Accuracy:
    """An accuracy over test problems with its 95% interval; ``gain``: minus majority vote on the same problems."""

    value: float | None
    ci: tuple[float, float] | None
    n_problems: int
    gain: float | None = None
    gain_ci: tuple[float, float] | None = None


def problem_correct(test: Sequence[ScoredSolution], n: int, how: str) -> dict[str, float]:
    """Per test problem with at least ``n`` solutions, the accuracy of ``how`` over its first ``n``: 1.0 or 0.0
    for a pick (an aggregation or :data:`MAJORITY`), the share of right solutions for :data:`RANDOM` (the exact
    expectation of a uniform pick), 1.0 when any is right for :data:`ORACLE`.

    >>> sols = [ScoredSolution(f"p{i}", "p", (0.9,), None, str(i), i == 1) for i in range(2)]
    >>> problem_correct(sols, 2, RANDOM), problem_correct(sols, 2, ORACLE), problem_correct(sols, 3, ORACLE)
    ({'p': 0.5}, {'p': 1.0}, {})
    """
    if how not in (RANDOM, ORACLE):
        return bon_correct(test, n, how)
    out = {}
    for pid, group in _by_problem(test).items():
        if len(group) >= n:
            ok = [bool(s.is_correct) for s in group[:n]]
            out[pid] = sum(ok) / n if how == RANDOM else float(any(ok))
    return out


def accuracy(test: Sequence[ScoredSolution], n: int, how: str, *, seed: int = 0) -> Accuracy:
    """Best-of-``n`` accuracy of ``how`` (an aggregation, or one of :data:`REFERENCES`) with its interval and, for
    anything but majority vote, its paired gain over majority vote.

    >>> sols = [ScoredSolution(f"{p}{i}", p, (0.9 if i else 0.2,), None, str(i), bool(i)) for p in "ab" for i in (0, 1)]
    >>> a = accuracy(sols, 2, "min")
    >>> a.value, a.ci, a.n_problems, a.gain, a.gain_ci
    (1.0, (1.0, 1.0), 2, 1.0, (1.0, 1.0))
    >>> accuracy(sols, 3, "min")
    Accuracy(value=None, ci=None, n_problems=0, gain=None, gain_ci=None)
    """
    picked = problem_correct(test, n, how)
    pids = sorted(picked)
    if not pids:
        return Accuracy(None, None, 0)
    values = [picked[p] for p in pids]
    value, ci = sum(values) / len(values), bootstrap_mean_ci(values, seed=seed)
    if how == MAJORITY:
        return Accuracy(value, ci, len(pids))
    majority = problem_correct(test, n, MAJORITY)
    base = [majority[p] for p in pids]
    return Accuracy(value, ci, len(pids), (sum(values) - sum(base)) / len(pids),
                    paired_bootstrap_diff_ci(values, base, seed=seed))


def choose_vote(val: Sequence[ScoredSolution], n: int) -> tuple[str, str]:
    """(the PRM-weighted vote with the best best-of-``n`` accuracy on ``val``, where it was chosen): the first of
    :data:`VOTES` wins a tie, and stands when no validation problem has ``n`` solutions.

    >>> val = [ScoredSolution(f"v{i}", "q", (0.9, x), None, a, a == "5") for i, (a, x) in enumerate(
    ...        [("3", 0.9), ("5", 0.2), ("5", 0.3)])]
    >>> choose_vote(val, 3), choose_vote(val, 4)  # "5" wins on summed means (1.15 vs 0.9), loses on sums of mins
    (('vote_mean', 'validation'), ('vote_min', 'default: no validation problem has 4 solutions'))
    """
    pools: dict[str, int] = defaultdict(int)
    for s in val:
        pools[s.problem_id] += 1
    if not any(k >= n for k in pools.values()):
        return VOTES[0], f"default: no validation problem has {n} solutions"
    acc, _ = bon_accuracies(val, n)
    return max(VOTES, key=acc.__getitem__), "validation"
