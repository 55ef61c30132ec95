"""Grading search results against gold answers, and accuracy with a bootstrap interval over problems."""

from __future__ import annotations

from collections.abc import Sequence

from prm.metrics import bootstrap_mean_ci
from prm.search.types import SearchResult
from verifiers import grade_answers


def grade(results: Sequence[SearchResult], golds: Sequence[str]) -> list[bool]:
    """Whether each pick's answer equals its gold (``verifiers.grade_answers``); no answer or ungradable is wrong.

    >>> from prm.search.types import SearchResult
    >>> grade([SearchResult("m", "q", "", "4", (), 0, 0), SearchResult("m", "q", "", None, (), 0, 0)], ["4", "4"])
    [True, False]
    """
    return [bool(ok) for ok in grade_answers([(r.answer, g) for r, g in zip(results, golds, strict=True)])]


def accuracy_ci(correct: Sequence[float], *, n_boot: int = 2000, seed: int = 0) -> tuple[float, float]:
    """A 95% percentile-bootstrap interval of the accuracy, resampling problems (a problem may hold a mean over seeds):
    :func:`prm.metrics.stats.bootstrap_mean_ci`.

    >>> accuracy_ci([True] * 10)
    (1.0, 1.0)
    >>> low, high = accuracy_ci([True, False] * 20); low < 0.5 < high
    True
    """
    if not correct:
        raise ValueError("no graded problems: an accuracy interval needs at least one")
    return bootstrap_mean_ci(correct, n_boot=n_boot, seed=seed)
