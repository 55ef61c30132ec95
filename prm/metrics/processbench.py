"""ProcessBench's official metric and the rule that keeps choices off the rows a figure is reported on.

The metric is ``code/run_eval.py`` of QwenLM/ProcessBench (commit e802463): per split, the accuracy on rows with an
error (predicted first wrong step == label), the accuracy on all-right rows (predicted -1), and F1 = their harmonic
mean. A prediction that is missing (``None``: no index could be read) is a miss, as ``pred == label`` is False there.
Figures here are fractions (0.479), the paper's are percentages (47.9).

Choices (a threshold, an aggregation, a labeler's rule) are made on the *validation* part of a split and reported
on the rest, or made on another split: :func:`choice_part` says which part a problem is in, by a digest of its
text, so every row of one problem lands in the same part and anyone can recompute the parts.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

VALIDATION, REPORT = "validation", "report"


def choice_part(problem: str) -> str:
    """``"validation"`` for about 3 problems in 8 (the first byte of the SHA-1 of the stripped text below 96),
    ``"report"`` for the rest: on ProcessBench's GSM8K split 156 rows to choose on and 244 to report.

    >>> choice_part("What is 2+2?"), choice_part("Sue has 3 apples.")
    ('validation', 'report')
    """
    return VALIDATION if hashlib.sha1(problem.strip().encode("utf-8")).digest()[0] < 96 else REPORT


@dataclass(frozen=True)
class OfficialScore:
    """ProcessBench's three figures on one split, as fractions, with the row counts behind them."""

    error_acc: float | None  # predicted == label on rows with an error; None when the split has none
    correct_acc: float | None  # predicted == -1 on all-right rows; None when the split has none
    f1: float | None  # harmonic mean; 0.0 when both accuracies are 0 (the official code prints nan there)
    n_error: int
    n_correct: int


def official_score(labels: Sequence[int], predicted: Sequence[int | None]) -> OfficialScore:
    """The figures of ``code/run_eval.py`` for rows with human ``labels`` (-1: all right) and ``predicted`` first
    errors (-1: none, None: unreadable, a miss).

    >>> s = official_score([-1, -1, 2, 0], [-1, 1, 2, None])
    >>> s.error_acc, s.correct_acc, round(s.f1, 4)
    (0.5, 0.5, 0.5)
    """
    if len(labels) != len(predicted):
        raise ValueError(f"{len(labels)} labels but {len(predicted)} predictions; give one prediction per row")
    error = [p == y for y, p in zip(labels, predicted, strict=True) if y != -1]
    correct = [p == y for y, p in zip(labels, predicted, strict=True) if y == -1]
    acc1 = sum(error) / len(error) if error else None
    acc2 = sum(correct) / len(correct) if correct else None
    both = acc1 is not None and acc2 is not None
    f1 = (2 * acc1 * acc2 / (acc1 + acc2) if acc1 + acc2 else 0.0) if both else None
    return OfficialScore(acc1, acc2, f1, len(error), len(correct))


def score_rows(rows: Sequence[Mapping[str, Any]]) -> OfficialScore:
    """:func:`official_score` of ``--out``-style rows (``{"label", "predicted"}``).

    >>> score_rows([{"label": -1, "predicted": -1}, {"label": 1, "predicted": 0}]).f1
    0.0
    """
    return official_score([int(r["label"]) for r in rows], [r.get("predicted") for r in rows])


__all__ = ["REPORT", "VALIDATION", "OfficialScore", "choice_part", "official_score", "score_rows"]
