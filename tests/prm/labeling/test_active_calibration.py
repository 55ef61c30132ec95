"""`active`'s default estimate, ``calibrated``: the PRM's probabilities Platt-scaled on labeled steps of the same
solutions' kind, so a PRM that scores every step low (as the shipped LM-head PRM does) still reads its first error
where it is; without labels of both classes it is ``band`` and says so; label_partition calibrates on the
partition's labels of the configured methods, never on pseudo-labels."""

from __future__ import annotations

import math

import pytest

from prm.labeling import ActiveConfig, label_partition
from prm.labeling.active import ActiveLabeler
from prm.labeling.partition import partition_step_labels
from prm.labeling.types import StepLabel
from prm.labeling.uncertainty import CalibratedUncertainty, platt
from tests.prm.labeling.test_active import ScriptedPRM, _partition
from tests.prm.labeling.test_sampler import _ScriptedBackend

RIGHT, WRONG = ("ok", "ok"), ("ok", "bad")
LOW_PRM = {RIGHT: [0.2, 0.2], WRONG: [0.2, 0.01]}  # every step below 0.5; a wrong one far below


def test_calibrated_reads_a_low_scoring_prm_right_where_band_cannot(solution) -> None:
    seed_set = [solution(f"l{i}", f"q{i}", RIGHT if i % 2 else WRONG) for i in range(20)]
    labels = {s.solution_id: [True, True] if tuple(s.steps) == RIGHT else [True, False] for s in seed_set}
    new = [solution("right", "p1", RIGHT), solution("wrong", "p2", WRONG)]
    band = ActiveLabeler(ActiveConfig(uncertainty="band"), scorer=ScriptedPRM(LOW_PRM)).plan(new)
    assert [band.beliefs[s].first_error for s in ("right", "wrong")] == [0, 0]  # raw 0.5: both wrong at step 0
    plan = ActiveLabeler(ActiveConfig(), scorer=ScriptedPRM(LOW_PRM)).plan([*seed_set, *new], labeled=labels,
                                                                           done=set(labels))
    assert [plan.beliefs[s].first_error for s in ("right", "wrong")] == [-1, 1]
    assert plan.calibration.startswith("platt") and "on 40 labeled steps (30 good)" in plan.calibration
    assert set(plan.beliefs) == {"right", "wrong"}  # the seed set calibrates; it is not planned again


def test_without_labels_of_both_classes_calibrated_is_band_and_says_so(solution) -> None:
    items = [("q", list(RIGHT))] * 12
    calibrated = CalibratedUncertainty(items, [[True, True]] * 12)
    beliefs = calibrated.beliefs(ScriptedPRM(LOW_PRM), [("p", list(WRONG))])
    assert beliefs[0].probs == (0.2, 0.01)
    assert calibrated.fitted.startswith("none: 24 labeled steps (24 good)")
    with pytest.raises(ValueError, match="2 labeled solutions but 1 label lists"):
        CalibratedUncertainty(items[:2], [[True, True]])


def test_platt_is_the_logistic_fit_on_the_logit_and_stays_finite_on_separable_scores() -> None:
    a, b = platt([0.9] * 50 + [0.1] * 50, [True] * 45 + [False] * 5 + [False] * 45 + [True] * 5)
    assert abs(1 / (1 + math.exp(-(a * math.log(9) + b))) - 0.9) < 0.03 and abs(b) < 1e-6  # already calibrated
    # Separable (every good step above every bad one) and scores at the clip: large, finite, ordered.
    a, b = platt([1e-22] * 40 + [0.3] * 40, [False] * 40 + [True] * 40)
    assert math.isfinite(a) and math.isfinite(b) and 0 < a < 100
    assert CalibratedUncertainty().beliefs is not None  # constructible without labels


def test_a_prm_that_scores_every_step_near_zero_leaves_the_solutions_unsure(solution) -> None:
    """The demo's case: the PRM puts ~1e-22 on most steps, good or bad; calibrated must read that as the base rate
    (unsure), never as a confident error (which would trust every solution as wrong at step 0)."""
    flat = {RIGHT: [1e-22, 1e-22], WRONG: [1e-22, 1e-22]}
    seed_set = [solution(f"l{i}", f"q{i}", RIGHT if i % 4 else WRONG) for i in range(20)]
    labels = {s.solution_id: [True, True] if tuple(s.steps) == RIGHT else [True, False] for s in seed_set}
    plan = ActiveLabeler(ActiveConfig(), scorer=ScriptedPRM(flat)).plan(
        [*seed_set, solution("new", "p1", RIGHT)], labeled=labels, done=set(labels))
    assert plan.trusted == () and plan.selected == ("new",)
    assert 0.5 < plan.beliefs["new"].probs[0] < 0.9


def test_label_partition_calibrates_on_the_partitions_labels_not_pseudo_ones(wh, prm_folders) -> None:
    kw = _partition(wh, 12)
    rows = [StepLabel(f"s{i}", f"p{i}", k, "mc", None, k == 0 or i % 3 != 0, "labeled", 2, 1, None, "{}").to_row()
            for i in range(11) for k in range(2)]
    rows += [StepLabel("s11", "p11", k, "mc", None, True, "pseudo", 0, 0, -1, "{}").to_row() for k in range(2)]
    wh.write("step_labels", rows, writer="mc", **kw)
    assert set(partition_step_labels(wh, ("mc",), **kw)) == {f"s{i}" for i in range(11)}
    config = ActiveConfig(prm=str(prm_folders["prm-pipeline"]), calibrate_on=("mc",), max_solutions=1, backing="mc",
                          rollouts=2)
    report = label_partition(wh, "active", config, _ScriptedBackend, model="policy", run_id="r", prompt=lambda q: q,
                             progress=lambda _: None, **kw)
    assert report.plan_note.startswith("platt") and "on 22 labeled steps (18 good)" in report.plan_note
    assert ActiveConfig().calibration_methods("active") == ("active", "omegaprm")
