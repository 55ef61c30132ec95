"""The PRM labeling convention: a solution's first wrong step and its per-step labels, both ways.

A step is good until the first wrong step; that step is wrong, and every later step is wrong *by
convention* (a prefix that holds an error stays wrong), as in PRM800K, Math-Shepherd and ProcessBench.
``first_error`` is the 0-based index of the first wrong step, ``-1`` when every step is good, and
``None`` when unknown. Every site that turns one into the other calls these functions.
"""

from __future__ import annotations

from collections.abc import Sequence

from warehouse import LABEL_STATUSES

# step_labels.status values, owned by the warehouse schema: the method decided this step; after the first
# wrong step (wrong by the convention above); the method could not decide (hard label null); a model's own label
# standing in for the method's (active labeling's pseudo-labels, which a training set may exclude).
STATUS_LABELED, STATUS_BY_CONVENTION, STATUS_UNVERIFIABLE, STATUS_PSEUDO = LABEL_STATUSES


def labels_from_first_error(n_steps: int, first_error: int | None) -> list[bool | None]:
    """Hard labels of ``n_steps`` steps given the first wrong one (``None``: all unknown).

    >>> labels_from_first_error(3, 1), labels_from_first_error(2, -1), labels_from_first_error(2, None)
    ([True, False, False], [True, True], [None, None])
    """
    if first_error is None:
        return [None] * n_steps
    return [first_error < 0 or k < first_error for k in range(n_steps)]


def statuses_from_first_error(n_steps: int, first_error: int | None) -> list[str]:
    """``labeled`` up to and including the first wrong step, ``by_convention`` after it.

    >>> statuses_from_first_error(3, 1)
    ['labeled', 'labeled', 'by_convention']
    """
    if first_error is None:
        return [STATUS_UNVERIFIABLE] * n_steps
    return [STATUS_BY_CONVENTION if 0 <= first_error < k else STATUS_LABELED for k in range(n_steps)]


def first_error_of(hard_labels: Sequence[bool | None]) -> int | None:
    """The first wrong step of per-step labels: -1 when all are good, None when an unknown comes first.

    >>> first_error_of([True, False, False]), first_error_of([True, True]), first_error_of([None, False])
    (1, -1, None)
    """
    for k, ok in enumerate(hard_labels):
        if ok is None:
            return None
        if not ok:
            return k
    return -1

