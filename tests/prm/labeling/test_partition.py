"""Stale-label detection on a real warehouse: labels older than their solution, or of a solution that is gone."""

from __future__ import annotations

import datetime as dt

import pytest

from prm.datagen.stored_solutions import policy_solutions
from prm.labeling.consensus import ConsensusConfig, apply_policy, collect_verdicts
from prm.labeling.partition import consensus_partition, current_labels, label_progress_partition
from prm.labeling.progress import ProgressConfig, progress_labels
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


def test_derived_methods_write_what_their_functions_compute_and_replace_it(wh: Warehouse) -> None:
    _solutions(wh, {"a": 1, "b": 1})
    wh.write("steps", [{"solution_id": sid, "problem_id": "p", "step_idx": k, "text": "1 = 1", "char_start": 0,
                        "char_end": 5} for sid in ("a", "b") for k in range(2)], source=SOURCE, day=DAY, replace=True)
    for method, first_error in (("mc", 1), ("judge", 1)):
        wh.write("step_labels", [{"solution_id": sid, "problem_id": "p", "step_idx": k, "method": method,
                                  "soft_label": float(k < 1), "hard_label": k < 1, "status": "labeled",
                                  "first_error": first_error, "n_rollouts": 8, "labeler_version": "t",
                                  "created_at": _at(2)} for sid in ("a", "b") for k in range(2)],
                 source=SOURCE, day=DAY, writer=method)
    stored = wh.read_partition("step_labels", SOURCE, DAY).to_pylist()
    expected_progress = [lb.to_row() for lb in progress_labels(stored, policy_solutions(wh, SOURCE, DAY))]
    expected_consensus = apply_policy(collect_verdicts(wh.read_partition("steps", SOURCE, DAY).to_pylist(), stored))
    for _ in range(2):  # a rerun replaces the method's rows
        labels = label_progress_partition(wh, ProgressConfig(), source=SOURCE, day=DAY, run_id="r")
        run, reports, verdicts = consensus_partition(wh, ConsensusConfig(), source=SOURCE, day=DAY, run_id="r")
    rows = wh.read_partition("step_labels", SOURCE, DAY).to_pylist()
    cols = list(expected_progress[0])

    def written(method: str) -> list[dict]:
        return sorted(({c: r[c] for c in cols} for r in rows if r["method"] == method), key=lambda r: _key(r))

    assert [lb.to_row() for lb in labels] == expected_progress
    assert written("progress") == sorted(expected_progress, key=_key) and len(expected_progress) == 4
    assert run == expected_consensus and run.kept == ("a", "b")
    assert written("consensus") == sorted(({c: r[c] for c in cols} for r in run.rows()), key=_key)
    assert len(verdicts) == 2 and {r.policy for r in reports} == {"mc_judge_agree", "formal_override", "all_agree"}


def _key(row: dict) -> tuple:
    return row["solution_id"], row["step_idx"]
