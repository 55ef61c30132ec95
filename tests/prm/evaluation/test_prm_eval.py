"""PRM evaluation on hand-computed tables: threshold on validation, step AUC, best-of-N, baselines, the table."""

from __future__ import annotations

import json
import math
import random

import pytest

from prm.best_of_n import (
    AGGREGATIONS,
    CONSTANT,
    LENGTH,
    MAJORITY,
    ORACLE,
    RANDOM,
    bon_accuracies,
    constant_baseline,
    evaluate_best_of_n,
    length_baseline,
)
from prm.first_error import (
    FLAG_ALL,
    NEVER_FLAG,
    UNCHOSEN_THRESHOLD,
    ScoredSolution,
    as_solutions,
    evaluate_processbench,
    predict_first_error,
    step_auc,
)
from prm.first_error.scores import candidate_thresholds, choose_threshold
from prm.metrics import gap_closed, processbench_f1, roc_auc
from prm.reports import evaluation_markdown, evaluation_table
from warehouse.schemas import PRM_EVALUATIONS


def sol(sid: str, scores, first_error=None, *, problem: str | None = None, answer=None, correct=None):
    return ScoredSolution(sid, problem or f"p-{sid}", tuple(scores), first_error, answer, correct)


# --- ProcessBench: the threshold comes from validation and is applied unchanged to test -------------------

@pytest.mark.parametrize("scores, threshold, expected", [
    ([0.9, 0.4, 0.1], 0.5, 1),
    ([0.9, 0.6], 0.5, -1),
    ([0.5, 0.1], 0.5, 1),  # strictly below: a score equal to the threshold is not an error
    ([0.0], NEVER_FLAG, -1),
    ([1.0, 1.0], FLAG_ALL, 0),
])
def test_predict_first_error(scores, threshold, expected):
    assert predict_first_error(scores, threshold) == expected


# Validation: "w" wrong at step 1, "c" correct. Candidates 0, .375, .625, .8125, 1+; only .375 gets both right.
VAL = [sol("w", [0.75, 0.25], 1), sol("c", [0.875, 0.5], -1)]


@pytest.mark.parametrize("test, grid, threshold, expected", [
    # test's error scores 0.4375 >= 0.375: missed, though a threshold of 0.5 chosen on test would catch it
    ([sol("tw", [0.75, 0.4375], 1), sol("tc", [0.625], -1)], None, 0.375, (0.0, 1.0, 0.0)),
    # the same threshold catches the error and rejects a correct solution whose lowest score is 0.25
    ([sol("tw", [0.75, 0.25], 1), sol("tc", [0.25, 0.9], -1), sol("tc2", [0.5], -1)], None, 0.375,
     (1.0, 0.5, 2 / 3)),
    # a fixed grid: 0.3 is the lowest point with val F1 = 1 (0.4 ties and loses); a step flagged early is a miss
    ([sol("tw", [0.25, 0.25, 0.1], 2), sol("tw2", [0.5, 0.2], 1), sol("tc", [0.5], -1)], [0.2, 0.3, 0.4, 0.6],
     0.3, (0.5, 1.0, 2 / 3)),
])
def test_threshold_is_chosen_on_validation_and_applied_to_test(test, grid, threshold, expected):
    result = evaluate_processbench(VAL, test, grid=grid)
    assert result.threshold == pytest.approx(threshold)
    assert result.val_f1 == 1.0
    assert (result.first_error_acc, result.correct_acc, result.f1) == pytest.approx(expected)
    assert result.n_wrong + result.n_correct == len(test)


def test_a_given_threshold_skips_the_choice():
    result = evaluate_processbench(VAL, [sol("tw", [0.75, 0.4375], 1), sol("tc", [0.625], -1)], threshold=0.5)
    assert (result.threshold, result.first_error_acc, result.correct_acc, result.f1) == (0.5, 1.0, 1.0, 1.0)


def test_choose_threshold_matches_brute_force_on_random_scores():
    """The interval counting in choose_threshold agrees with scoring every candidate by processbench_f1."""
    rng = random.Random(0)
    for _ in range(20):
        sols = []
        for i in range(12):
            n = rng.randint(1, 5)
            scores = [round(rng.random(), 2) for _ in range(n)]  # rounding makes ties between scores
            sols.append(sol(f"s{i}", scores, rng.choice([-1, *range(n)])))
        if {s.first_error >= 0 for s in sols} != {True, False}:
            continue
        truth = {s.solution_id: s.first_error for s in sols}
        f1 = {t: processbench_f1({s.solution_id: predict_first_error(s.scores, t) for s in sols}, truth)
              for t in candidate_thresholds(sols)}
        best = max(f1.values())
        assert choose_threshold(sols) == min(t for t, v in f1.items() if v == best)


@pytest.mark.parametrize("val, match", [
    ([sol("c", [0.9], -1)], "0 wrong and 1 correct"),
    ([sol("w", [0.9], 0), sol("u", [0.2], None)], "1 wrong and 0 correct"),
])
def test_threshold_needs_both_kinds_on_validation(val, match):
    with pytest.raises(ValueError, match=match):
        choose_threshold(val)


# --- step ROC-AUC --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("positive, scores, expected", [
    ([True, True, False, False], [0.8, 0.4, 0.6, 0.2], 0.75),  # 3 of 4 pairs ordered
    ([True, False], [0.5, 0.5], 0.5),  # a tie counts half
    ([True, True, False], [0.9, 0.5, 0.5], 0.75),  # one pair ordered, one tied
    ([False, True], [0.9, 0.1], 0.0),
    ([True, True], [0.1, 0.9], None),  # one class only
])
def test_roc_auc(positive, scores, expected):
    assert roc_auc(positive, scores) == (None if expected is None else pytest.approx(expected))


def test_step_auc_counts_steps_up_to_the_first_error_unless_asked():
    # Risk = 1 - score. Up to the first error: wrong {0.6, 0.8}, good {0.4, 0.2, 0.7}; 0.6 beats 0.4 and 0.2,
    # 0.8 beats all three -> 5/6. All steps adds a by-convention wrong step of risk 0.1 that beats nothing:
    # 5/9. A solution without truth is left out.
    sols = [sol("a", [0.6, 0.4, 0.9], 1), sol("b", [0.8, 0.3], -1), sol("c", [0.2], 0), sol("u", [0.0], None)]
    assert step_auc(sols) == (pytest.approx(5 / 6), 5)
    assert step_auc(sols, all_steps=True) == (pytest.approx(5 / 9), 6)


# --- best-of-N -----------------------------------------------------------------------------------------------

# (scores, final answer, correct) per solution of one problem
TIES = [([0.9, 0.5], "3", False), ([0.5, 0.9], "5", True), ([0.6, 0.6], "5", True), ([0.9, 0.5], "3", False)]


@pytest.mark.parametrize("pool, n, expected", [
    # min: .5 .5 .6 .5 -> s2; product and mean tie s0/s1/s3 -> the first, s0; last: s1; answers 3,5 tie -> "3".
    # Weighted votes, "3" vs "5": min 1.0 vs 1.1, mean 1.4 vs 1.3, last 1.0 vs 1.5
    (TIES, 4, {"min": 1, "product": 0, "last": 1, "mean": 0, MAJORITY: 0, RANDOM: 0.5, ORACLE: 1,
               "vote_min": 1, "vote_mean": 0, "vote_last": 1}),
    # the first two only: min ties -> s0; majority "3" vs "5" tie -> "3"; votes: min and mean tie -> "3"
    (TIES, 2, {"min": 0, "product": 0, "last": 1, "mean": 0, MAJORITY: 0, RANDOM: 0.5, ORACLE: 1,
               "vote_min": 0, "vote_mean": 0, "vote_last": 1}),
    # answers without a value do not vote; ungradable (None) counts as wrong
    ([([0.2], None, None), ([0.9], None, False), ([0.1], "7", True)], 3,
     {"min": 0, "product": 0, "last": 0, "mean": 0, MAJORITY: 1, RANDOM: 1 / 3, ORACLE: 1,
      "vote_min": 1, "vote_mean": 1, "vote_last": 1}),
    # a zero step sinks the product (log -inf) but not the mean; votes "1" vs "2": min 0 vs .4, mean .5 vs .4
    ([([0.0, 1.0], "1", True), ([0.4, 0.4], "2", False)], 2,
     {"min": 0, "product": 0, "last": 1, "mean": 1, MAJORITY: 1, RANDOM: 0.5, ORACLE: 1,
      "vote_min": 0, "vote_mean": 1, "vote_last": 1}),
])
def test_best_of_n_with_ties(pool, n, expected):
    sols = [sol(f"s{i}", sc, problem="p", answer=a, correct=ok) for i, (sc, a, ok) in enumerate(pool)]
    accuracy, n_problems = bon_accuracies(sols, n)
    assert accuracy == pytest.approx(expected)
    assert n_problems == 1


def test_best_of_n_skips_short_problems_and_refuses_when_none_is_long_enough():
    sols = [sol("a0", [0.9], problem="a", correct=True), sol("a1", [0.1], problem="a", correct=False),
            sol("b0", [0.9], problem="b", correct=False)]
    accuracy, n_problems = bon_accuracies(sols, 2)
    assert n_problems == 1 and accuracy["min"] == 1.0
    with pytest.raises(ValueError, match="at least 3 solutions"):
        bon_accuracies(sols, 3)


def test_aggregation_is_chosen_on_validation_and_gap_share_is_reported():
    # Validation: only "last" picks the right solution. Test: "last" is right on 1 of 2 problems, "min" on 2.
    val = [sol("v0", [0.9, 0.2], problem="v", answer="1", correct=False),
           sol("v1", [0.1, 0.8], problem="v", answer="2", correct=True),
           sol("v2", [0.05, 0.1], problem="v", answer="1", correct=False)]
    test = [sol("a0", [0.5, 0.9], problem="a", answer="1", correct=False),
            sol("a1", [0.6, 0.7], problem="a", answer="2", correct=True),
            sol("a2", [0.1, 0.8], problem="a", answer="1", correct=False),
            sol("b0", [0.9, 0.9], problem="b", answer="3", correct=True),
            sol("b1", [0.2, 0.5], problem="b", answer="4", correct=False),
            sol("b2", [0.2, 0.1], problem="b", answer="4", correct=False)]
    bon = evaluate_best_of_n(val, test, 3)
    assert bon.chosen == "last" and bon.val_accuracy["last"] == 1.0 and bon.val_accuracy["min"] == 0.0
    assert bon.accuracy["min"] == 1.0 and bon.prm == 0.5  # test's best aggregation is not the one reported
    assert (bon.accuracy[MAJORITY], bon.accuracy[ORACLE]) == (0.0, 1.0)  # "1" wins a, "4" wins b
    assert bon.gap_closed == 0.5


@pytest.mark.parametrize("picked, majority, oracle, expected", [
    (0.75, 0.5, 1.0, 0.5),
    (0.5, 0.5, 1.0, 0.0),
    (0.25, 0.5, 1.0, -0.5),  # worse than majority vote
    (1.0, 0.5, 1.0, 1.0),
    (0.7, 0.6, 0.6, None),  # no gap to close
    (None, 0.5, 1.0, None),
])
def test_gap_closed(picked, majority, oracle, expected):
    assert gap_closed(picked, majority, oracle) == (None if expected is None else pytest.approx(expected))


# --- baselines -----------------------------------------------------------------------------------------------

# Wrong solutions are long with their error at step 2, correct ones short: length alone separates them.
LEN_VAL = [sol("w1", [0.9] * 3, 2), sol("w2", [0.9] * 4, 2), sol("c1", [0.1] * 2, -1), sol("c2", [0.1] * 2, -1)]
LEN_TEST = [sol("t1", [0.9] * 5, 1), sol("t2", [0.9] * 3, -1), sol("t3", [0.9] * 3, 2), sol("t4", [0.9], -1)]


@pytest.mark.parametrize("baseline, threshold, expected", [
    # never flags: misses every error, accepts every correct solution
    (constant_baseline, NEVER_FLAG, dict(threshold=NEVER_FLAG, first_error_acc=0.0, correct_acc=1.0, f1=0.0)),
    # step k scores 1/(k+2); validation picks the midpoint of 1/4 and 1/3, flagging step 2 of longer solutions:
    # t1 predicted 2 (truth 1), t2 rejected, t3 right, t4 accepted
    (length_baseline, None, dict(threshold=(1 / 4 + 1 / 3) / 2, first_error_acc=0.5, correct_acc=0.5, f1=0.5)),
])
def test_baselines_processbench(baseline, threshold, expected):
    result = evaluate_processbench(baseline(LEN_VAL), baseline(LEN_TEST), threshold=threshold)
    for name, value in expected.items():
        assert getattr(result, name) == pytest.approx(value), name


def test_baseline_step_auc():
    # constant: every pair tied; length: the wrong steps sit later than the good ones they are compared with
    assert step_auc(constant_baseline(LEN_TEST)) == (0.5, 9)
    # up to the first error: wrong steps t1@1 (risk 2/3), t3@2 (3/4); good: t1@0, t2@0..2, t3@0..1, t4@0
    # risks 1/2, 1/2, 2/3, 3/4, 1/2, 2/3, 1/2: 2/3 beats 4 and ties 2; 3/4 beats 6 and ties 1 -> 11.5/14
    assert step_auc(length_baseline(LEN_TEST)) == (pytest.approx(11.5 / 14), 9)


# --- the prm_evaluations table -------------------------------------------------------------------------------

def _pool(problem: str, good_first: bool) -> list[dict]:
    """Two solutions: a correct one and one wrong at step 1 that the PRM scores low there."""
    right = {"solution_id": f"{problem}-r", "problem_id": problem, "scores": [0.9, 0.8], "first_error": -1,
             "final_answer": "1", "is_correct": True}
    wrong = {"solution_id": f"{problem}-w", "problem_id": problem, "scores": [0.9, 0.2], "step_truth": [True, False],
             "final_answer": "2", "is_correct": False}
    return [right, wrong] if good_first else [wrong, right]


VAL_ROWS = _pool("v1", True) + _pool("v2", False)
TEST_ROWS = _pool("t1", True) + _pool("t2", False)


def test_evaluation_table_rows():
    rows = evaluation_table("prm-omega", "omegaprm", VAL_ROWS, TEST_ROWS, bon_n=2)
    value = {(r["model"], r["metric"]): r["value"] for r in rows}
    assert len(value) == len(rows)  # (model, split, metric) is the table's key within a run
    assert {r["split"] for r in rows} == {"test"}
    assert value[("prm-omega", "processbench_f1")] == 1.0
    assert value[(CONSTANT, "processbench_f1")] == 0.0
    assert value[("prm-omega", "step_auc")] == 1.0 and value[(CONSTANT, "step_auc")] == 0.5
    # the constant picks the first solution: right on t1, wrong on t2; the PRM always picks the right one
    assert value[("prm-omega", "bon_acc@2")] == 1.0 and value[(CONSTANT, "bon_acc@2")] == 0.5
    assert value[(MAJORITY, "bon_acc@2")] == 0.5  # "1" vs "2" tie: the first answer
    assert (value[(RANDOM, "bon_acc@2")], value[(ORACLE, "bon_acc@2")]) == (0.5, 1.0)
    assert value[("prm-omega", "bon_gap_closed@2")] == 1.0
    assert (LENGTH, "processbench_f1") in value
    detail = json.loads(next(r["detail_json"] for r in rows if r["metric"] == "processbench_f1"))
    assert detail["chosen_on"] == "validation" and detail["val_f1"] == 1.0 and 0.2 < detail["threshold"] <= 0.8
    assert {r["label_method"] for r in rows if r["model"] == "prm-omega"} == {"omegaprm"}


@pytest.mark.parametrize("val", [
    [r for r in VAL_ROWS if r.get("first_error") == -1],  # validation without a wrong solution (demo, 2026-11-24)
    [r for r in VAL_ROWS if "step_truth" in r],  # ... or without a correct one
    [],  # ... or empty
])
def test_a_validation_split_that_cannot_choose_falls_back_and_says_so(val):
    rows = evaluation_table("prm-omega", "omegaprm", val, TEST_ROWS, bon_n=2)
    f1 = next(r for r in rows if r["metric"] == "processbench_f1" and r["model"] == "prm-omega")
    detail = json.loads(f1["detail_json"])
    assert detail["threshold"] == UNCHOSEN_THRESHOLD and detail["chosen_on"].startswith("default 0.5: validation has")
    assert f1["value"] is not None  # test is still measured, at the default threshold
    bon = json.loads(next(r["detail_json"] for r in rows if r["metric"] == "bon_acc@2" and r["model"] == "prm-omega"))
    assert bon["aggregation"] in AGGREGATIONS
    assert "NaN" not in json.dumps([r["detail_json"] for r in rows])


def test_best_of_n_takes_the_first_aggregation_when_validation_has_no_full_pool():
    bon = evaluate_best_of_n(as_solutions(VAL_ROWS[::2]), as_solutions(TEST_ROWS), 2)  # one solution per problem
    assert bon.chosen == AGGREGATIONS[0] and set(bon.val_accuracy.values()) == {None}


def test_evaluation_table_writes_to_the_warehouse(wh):
    rows = evaluation_table("prm-omega", "omegaprm", VAL_ROWS, TEST_ROWS, bon_n=2)
    expected = {f.name for f in PRM_EVALUATIONS} - {"run_id", "created_at", "source", "day"}
    assert all(set(r) == expected for r in rows)
    wh.write("prm_evaluations", rows, source="arith", day="2026-01-01")
    back = wh.read("prm_evaluations").to_pylist()
    assert sorted((r["model"], r["metric"], r["value"]) for r in back) == sorted(
        (r["model"], r["metric"], r["value"]) for r in rows)


def test_evaluation_table_refuses_a_problem_in_both_splits():
    with pytest.raises(ValueError, match="share 1 problems"):
        evaluation_table("prm", None, VAL_ROWS, _pool("v1", True), bon_n=2)


def test_evaluation_markdown_pivots_models_by_metric():
    rows = evaluation_table("prm-omega", "omegaprm", VAL_ROWS, TEST_ROWS, bon_n=2)
    text = evaluation_markdown(rows, metrics=["processbench_f1", "bon_acc@2", "step_auc"])
    lines = text.splitlines()
    assert lines[0] == "| model | label_method | split | processbench_f1 | bon_acc@2 | step_auc |"
    assert lines[2] == "| prm-omega | omegaprm | test | 1.000 | 1.000 | 1.000 |"
    assert f"| {MAJORITY} | - | test | - | 0.500 | - |" in lines
    assert len(lines) == 2 + 6  # prm, two baselines, three references


# --- bad input -----------------------------------------------------------------------------------------------

BASE = {"solution_id": "s", "problem_id": "p", "scores": [0.5, 0.5]}


@pytest.mark.parametrize("change, match", [
    ({"scores": []}, "no step scores"),
    ({"scores": [0.5, math.nan]}, r"outside \[0, 1\]"),
    ({"scores": [0.5, 1.5]}, "not logits"),
    ({"n_steps": 3}, "n_steps=3 but 2 scores"),
    ({"first_error": 2}, "first_error 2 but 2 steps"),
    ({"first_error": 0, "step_truth": [True, False]}, "disagrees with step_truth"),
])
def test_bad_solutions_are_refused(change, match):
    with pytest.raises(ValueError, match=match):
        as_solutions([{**BASE, **change}])


def test_duplicate_solutions_are_refused():
    with pytest.raises(ValueError, match="appears twice"):
        as_solutions([BASE, BASE])
