"""Does the judge agree with the outcome on the data it judged? A data-level check of an LLM judge.

The judge's card is measured on its own (arithmetic) test set; off that domain it can call wrong solutions right.
Every solution with a gold answer gives a free test: a solution whose final answer is wrong has a wrong step, so a
judge that names no error in it (``first_error = -1``) disagrees with the outcome. A solution graded right that
the judge flags may still hold a wrong step (a lucky answer), so it is counted but weighs less in the verdict: the
agreement is measured on the wrong-outcome solutions, where the outcome is proof.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class JudgeOutcomeBand:
    """Where the judge's agreement with wrong outcomes must lie (shares of wrong-outcome solutions it judged)."""

    warn_below: float = 0.8  # ProcessBench-style judges name an error in most wrong solutions
    fail_below: float = 0.5  # below a coin flip its "all right" verdicts are noise: stop before consensus uses them
    min_solutions: int = 8  # fewer wrong-outcome solutions than this: too few to judge the judge (passes, says so)

    def __post_init__(self) -> None:
        if not 0.0 <= self.fail_below <= self.warn_below <= 1.0:
            raise ValueError(f"fail_below={self.fail_below} <= warn_below={self.warn_below} must both lie in [0, 1]")
        if self.min_solutions < 1:
            raise ValueError(f"min_solutions={self.min_solutions} must be >= 1")


@dataclass(frozen=True)
class JudgeOutcomeAgreement:
    """Counts over the judged solutions that have a graded outcome (judge abstentions left out)."""

    wrong: int  # wrong-outcome solutions with a judge verdict
    wrong_called_right: int  # ... that the judge called all right: disagreements
    right: int  # right-outcome solutions with a judge verdict
    right_called_wrong: int  # ... that the judge flagged (a wrong step, or a judge error)

    @property
    def agreement(self) -> float | None:
        """Share of wrong-outcome solutions in which the judge names an error; None without any."""
        return (self.wrong - self.wrong_called_right) / self.wrong if self.wrong else None

    @classmethod
    def of(cls, judgments: Sequence[Mapping[str, Any]], solutions: Sequence[Mapping[str, Any]]
           ) -> JudgeOutcomeAgreement:
        """Join ``judgments`` rows (``solution_id``, ``first_error``) with ``solutions`` rows (``is_correct``).

        >>> a = JudgeOutcomeAgreement.of(
        ...     [{"solution_id": "s1", "first_error": -1}, {"solution_id": "s2", "first_error": 2},
        ...      {"solution_id": "s3", "first_error": None}],
        ...     [{"solution_id": "s1", "is_correct": False}, {"solution_id": "s2", "is_correct": False},
        ...      {"solution_id": "s3", "is_correct": False}])
        >>> a.wrong, a.wrong_called_right, a.agreement
        (2, 1, 0.5)
        """
        outcome = {s["solution_id"]: s.get("is_correct") for s in solutions}
        wrong = wrong_right = right = right_wrong = 0
        for j in judgments:
            verdict, correct = j.get("first_error"), outcome.get(j["solution_id"])
            if verdict is None or correct is None:
                continue  # the judge abstained, or the solution has no graded outcome
            if correct:
                right += 1
                right_wrong += verdict >= 0
            else:
                wrong += 1
                wrong_right += verdict < 0
        return cls(wrong=wrong, wrong_called_right=wrong_right, right=right, right_called_wrong=right_wrong)


@dataclass(frozen=True)
class JudgeOutcomeVerdict:
    """``severity`` is ``ok``, ``warn`` or ``fail``."""

    severity: str
    message: str


def judge_outcome_verdict(agreement: JudgeOutcomeAgreement, band: JudgeOutcomeBand = JudgeOutcomeBand()
                          ) -> JudgeOutcomeVerdict:
    """The verdict on a judge from its agreement with the outcome, and what to do below the band.

    >>> judge_outcome_verdict(JudgeOutcomeAgreement(wrong=32, wrong_called_right=10, right=4,
    ...                                             right_called_wrong=1)).severity
    'warn'
    >>> judge_outcome_verdict(JudgeOutcomeAgreement(32, 17, 4, 1)).severity  # the issue's SmolLM2 judge on MATH
    'fail'
    """
    a = agreement
    counts = (f"the judge named an error in {a.wrong - a.wrong_called_right} of {a.wrong} solutions whose final "
              f"answer is wrong, and flagged {a.right_called_wrong} of {a.right} whose answer is right")
    if a.wrong < band.min_solutions:
        return JudgeOutcomeVerdict("ok", f"{counts}: fewer than {band.min_solutions} wrong-outcome solutions, too "
                                   "few to measure the judge on this data")
    share = a.agreement or 0.0
    if share >= band.warn_below:
        return JudgeOutcomeVerdict("ok", f"{counts} ({share:.0%}, band >= {band.warn_below:.0%})")
    advice = ("its 'all right' verdicts are not evidence on this data (off its domain); use a stronger judge model "
              "(the `judge` resource), fine-tune it on this domain, or leave the judge out of consensus")
    severity = "fail" if share < band.fail_below else "warn"
    limit = band.fail_below if severity == "fail" else band.warn_below
    return JudgeOutcomeVerdict(severity, f"{counts}: {share:.0%} is below {limit:.0%}; {advice}")
