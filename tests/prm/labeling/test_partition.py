"""Stale-label detection on a real warehouse: labels older than their solution, or of a solution that is gone."""

from __future__ import annotations

import datetime as dt

import pytest

from prm.labeling.partition import current_labels
from warehouse import Warehouse

SOURCE, DAY = "arith", "2026-11-20"
T0 = dt.datetime(2026, 11, 20, 12, tzinfo=dt.UTC)


def _at(minutes: int) -> dt.datetime:
    return T0 + dt.timedelta(minutes=minutes)


def _solutions(wh: Warehouse, written: dict[str, int]) -> None:
    """Write solutions ``{solution_id: minute written}``, replacing the partition as the solutions asset does."""
    wh.write("solutions", [{"solution_id": sid, "problem_id": "p", "sample_idx": i, "text": "1 = 1\n", "n_steps": 1,
                            "status": "ok", "model": "m", "created_at": _at(minute)}
                           for i, (sid, minute) in enumerate(written.items())],
             source=SOURCE, day=DAY, replace=True)


def _labels(wh: Warehouse, method: str, labeled: dict[str, int]) -> None:
    """Write one step label per solution ``{solution_id: minute labeled}``."""
    wh.write("step_labels", [{"solution_id": sid, "problem_id": "p", "step_idx": 0, "method": method,
                              "soft_label": 1.0, "hard_label": True, "status": "labeled", "labeler_version": "t",
                              "created_at": _at(minute)} for sid, minute in labeled.items()],
             source=SOURCE, day=DAY, writer=method)


@pytest.mark.parametrize(
    "labeled, expected",
    [
        ({}, set()),  # nothing labeled yet
        ({"a": 5, "b": 5}, {"a", "b"}),  # labeled after the solutions were written: fresh
        ({"a": 1}, {"a"}),  # written in the same instant counts as fresh (not older)
        ({"a": 5, "b": 0}, None),  # b's label predates its solution's current text
        ({"a": 5, "gone": 5}, None),  # a label of a solution that is no longer in the partition
    ],
    ids=["none", "fresh", "same_instant", "older_than_solution", "solution_gone"],
)
def test_current_labels_detects_stale_labels(wh: Warehouse, labeled, expected) -> None:
    _solutions(wh, {"a": 1, "b": 1})
    _labels(wh, "mc", labeled)
    _labels(wh, "omegaprm", {"b": 0, "gone": 0})  # another method's stale labels are its own business
    assert current_labels(wh, "mc", SOURCE, DAY) == expected


def test_resampling_the_solutions_makes_earlier_labels_stale(wh: Warehouse) -> None:
    _solutions(wh, {"a": 1, "b": 1})
    _labels(wh, "mc", {"a": 2, "b": 2})
    assert current_labels(wh, "mc", SOURCE, DAY) == {"a", "b"}
    _solutions(wh, {"a": 3, "b": 3})  # the solutions asset re-ran: same ids, maybe new texts
    assert current_labels(wh, "mc", SOURCE, DAY) is None
    _solutions(wh, {"a": 3})  # fewer samples: b is gone
    wh.delete_partition("step_labels", SOURCE, DAY, writer="mc")
    _labels(wh, "mc", {"a": 4})
    assert current_labels(wh, "mc", SOURCE, DAY) == {"a"}
    _labels(wh, "mc", {"b": 4})
    assert current_labels(wh, "mc", SOURCE, DAY) is None
