"""Step metrics (ProcessBench F1, step ROC-AUC, step sensitivity) need exact step truth; a table whose solutions
have none says :data:`NO_STEP_TRUTH` in their place, never a number or an error."""

from __future__ import annotations

from collections.abc import Sequence

from prm.first_error.scores import ScoredSolution

NO_STEP_TRUTH = "no step truth"  # what a table says where a step metric has nothing to be measured against
MISSING_KEY = "missing"  # the detail key of a row whose value is None for a stated reason


def has_step_truth(solutions: Sequence[ScoredSolution]) -> bool:
    """Whether any solution carries exact step truth (a first wrong step, or -1 for none).

    >>> has_step_truth([ScoredSolution("a", "p", (0.5,), None)]), has_step_truth([ScoredSolution("a", "p", (0.5,), -1)])
    (False, True)
    """
    return any(s.first_error is not None for s in solutions)


def step_truth_note(solutions: Sequence[ScoredSolution]) -> dict[str, str]:
    """The detail a step-metric row carries when ``solutions`` have no step truth (``{"missing": "no step
    truth"}``), else nothing.

    >>> step_truth_note([ScoredSolution("a", "p", (0.5,), None)])
    {'missing': 'no step truth'}
    """
    return {} if has_step_truth(solutions) else {MISSING_KEY: NO_STEP_TRUTH}
