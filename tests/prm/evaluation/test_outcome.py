"""Outcome-level evaluation where step truth is missing (GSM8K/MATH-like data): best-of-N, the PRM-weighted vote and
majority vote against the gold answer with intervals, and "no step truth" where a step metric would be."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prm.best_of_n import MAJORITY, ORACLE, RANDOM, accuracy, answer_key, choose_vote
from prm.best_of_n.outcome import VOTES, problem_correct
from prm.evaluation import heldout_solutions
from prm.evaluation.folder import evaluate_folder
from prm.experiments.label_sources import ComparisonConfig, compare_label_sources, comparison_markdown, comparison_table
from prm.first_error import NO_STEP_TRUTH, ScoredSolution, has_step_truth
from prm.reports import evaluation_markdown, evaluation_table, sensitivity_text
from prm.training import PRMTrainConfig, TrainingSetConfig, stratified_splits
from tests.tiny_models import TinyModels
from warehouse import Warehouse, connect

from .gsm8k_like import N_SAMPLES, fill_gsm8k_like

CONTEXT = 256  # the tiny PRM's positions: a question and four short steps fit


def outcome_only(n_problems: int = 6) -> list[ScoredSolution]:
    """Hand-made test solutions without step truth: the PRM scores the right answer higher on even problems."""
    out = []
    for p in range(n_problems):
        for i, (answer, right) in enumerate([("1", True), ("2", False), ("2", False)]):
            score = (0.9 if right else 0.2) if p % 2 == 0 else (0.2 if right else 0.9)
            out.append(ScoredSolution(f"q{p}-{i}", f"q{p}", (0.8, score), None, answer, right))
    return out


# --- pure functions -------------------------------------------------------------------------------------------

def test_references_and_picks_are_graded_against_the_gold_answer() -> None:
    test = outcome_only()
    assert not has_step_truth(test)
    assert set(problem_correct(test, 3, MAJORITY).values()) == {0.0}  # "2" outvotes the right "1" everywhere
    assert problem_correct(test, 3, RANDOM) == {f"q{p}": pytest.approx(1 / 3) for p in range(6)}
    assert set(problem_correct(test, 3, ORACLE).values()) == {1.0}
    best = accuracy(test, 3, "min")
    assert best.value == 0.5 and best.n_problems == 6 and best.gain == 0.5  # right on the even problems only
    low, high = best.ci
    assert low < 0.5 < high  # six problems, half right: the interval is wide and says so
    assert accuracy(test, 3, MAJORITY).gain is None


def test_the_weighted_vote_is_chosen_on_validation_and_outvotes_majority() -> None:
    # The right answer's one solution scores (0.8, 0.95), the wrong answer's two (0.8, 0.3): summed mins 0.8 vs 0.6
    # (right), summed means 0.875 vs 1.1 (wrong), summed last steps 0.95 vs 0.6 (right). Majority vote is wrong.
    val = [ScoredSolution(f"v{i}", "v", (0.8, x), None, a, a == "1") for i, (a, x) in
           enumerate([("1", 0.95), ("2", 0.3), ("2", 0.3)])]
    vote, chosen_on = choose_vote(val, 3)
    assert (vote, chosen_on) == (VOTES[0], "validation")  # vote_min, the first of the two right ones
    assert accuracy(val, 3, vote).value == 1.0 and accuracy(val, 3, MAJORITY).value == 0.0


def test_the_table_says_no_step_truth_instead_of_a_number_and_keeps_outcome_figures() -> None:
    test, val = outcome_only(), outcome_only(4)
    val = [ScoredSolution("v" + s.solution_id, "v" + s.problem_id, s.scores, None, s.final_answer, s.is_correct)
           for s in val]
    rows = evaluation_table("prm", "mc", val, test, bon_n=3)
    own = {r["metric"]: r for r in rows if r["model"] == "prm"}
    for metric in ("processbench_f1", "first_error_acc", "correct_acc", "step_auc", "step_auc_all"):
        assert own[metric]["value"] is None
        assert json.loads(own[metric]["detail_json"])["missing"] == NO_STEP_TRUTH
    assert own["bon_acc@3"]["value"] == 0.5 and json.loads(own["bon_acc@3"]["detail_json"])["ci"]
    assert own["vote_acc@3"]["value"] is not None and json.loads(own["vote_acc@3"]["detail_json"])["ci"]
    refs = {r["model"]: r for r in rows if r["metric"] == "bon_acc@3"}
    assert refs[MAJORITY]["value"] == 0.0 and refs[ORACLE]["value"] == 1.0
    assert json.loads(refs[MAJORITY]["detail_json"])["ci"] == [0.0, 0.0]  # references carry intervals too
    markdown = evaluation_markdown(rows, ["processbench_f1", "bon_acc@3"])
    assert f"| prm | mc | test | {NO_STEP_TRUTH} | 0.500 |" in markdown
    assert "0.000 |" not in markdown.splitlines()[2]


def test_step_truth_keeps_its_numbers() -> None:
    sols = [ScoredSolution(f"{p}{i}", p, (0.9, 0.2 if i else 0.8), 1 if i else -1, str(i), not i)
            for p in "abcd" for i in range(2)]
    rows = evaluation_table("prm", "mc", sols[:4], sols[4:], bon_n=2)
    f1 = next(r for r in rows if r["model"] == "prm" and r["metric"] == "processbench_f1")
    assert f1["value"] == 1.0 and "missing" not in json.loads(f1["detail_json"])


@pytest.mark.parametrize("a, b, same", [
    ("1,234", "1234", True), ("18.0", "18", True), ("$18$", "18", True), ("0.5", "0.50", True), ("18", "180", False),
    ("18", "18 dollars", False), ("-3", "3", False), ("1" * 60, "1" * 60, True),
])
def test_answers_that_are_one_number_are_one_vote(a: str, b: str, same: bool) -> None:
    assert (answer_key(a) == answer_key(b)) is same


def test_majority_vote_counts_one_number_written_two_ways_once() -> None:
    sols = [ScoredSolution(f"s{i}", "p", (0.5,), None, answer_key(a), a.replace(",", "") == "1234")
            for i, a in enumerate(["1,234", "1234", "99", "99.5", "99"])]
    # Raw strings: "99" (two votes) beats "1,234" and "1234" (one each); as numbers 1234 has two and is seen first.
    assert accuracy(sols, 5, MAJORITY).value == 1.0


# --- the warehouse: held-out solutions, a PRM folder, the label-source comparison -------------------------------

def test_heldout_keeps_solutions_graded_against_gold_without_step_truth(wh: Warehouse) -> None:
    fill_gsm8k_like(wh)
    con = connect(wh.root)
    data = TrainingSetConfig(method="mc", val_share=0.25, test_share=0.35)
    held = heldout_solutions(con, stratified_splits(con, data))
    assert held["test"] and held["val"]
    assert {s["first_error"] for s in held["test"]} == {None}
    assert {s["is_correct"] for s in held["test"]} == {True, False, None}  # the no-answer sample is kept (wrong)
    assert all(len(s["steps"]) == 3 for s in held["test"])


def test_a_prm_is_evaluated_on_outcomes_alone(wh: Warehouse, tiny_models: TinyModels) -> None:
    fill_gsm8k_like(wh)
    con = connect(wh.root)
    data = TrainingSetConfig(method="mc", val_share=0.25, test_share=0.35)
    ev = evaluate_folder(tiny_models.prm(CONTEXT), heldout_solutions(con, stratified_splits(con, data)), "mc")
    assert ev.bon_n == N_SAMPLES
    rows = {(r["model"], r["metric"]): r for r in ev.rows}
    n_test = len({s["problem_id"] for s in ev.scored["test"]})
    assert rows[(ev.model, f"bon_acc@{N_SAMPLES}")]["n"] == n_test
    assert rows[(MAJORITY, f"bon_acc@{N_SAMPLES}")]["value"] == pytest.approx(
        sum(int(s["problem_id"][1:]) % 2 == 0 for s in ev.scored["test"] if s["solution_id"].endswith("s0")) / n_test)
    assert rows[(ORACLE, f"bon_acc@{N_SAMPLES}")]["value"] == 1.0  # sample 0 is always right
    assert rows[(ev.model, "processbench_f1")]["value"] is None
    sens = rows[(ev.model, "step_sensitivity")]
    assert sensitivity_text(sens).startswith(NO_STEP_TRUTH)
    assert NO_STEP_TRUTH in evaluation_markdown(ev.rows)


def test_the_label_source_comparison_falls_back_to_outcomes(wh: Warehouse, tiny_models: TinyModels,
                                                            tmp_path: Path) -> None:
    fill_gsm8k_like(wh)
    config = ComparisonConfig(methods=("truth", "mc"),
                              data=TrainingSetConfig(method="mc", val_share=0.25, test_share=0.35),
                              train=PRMTrainConfig(base_model=str(tiny_models.lm(CONTEXT)), max_steps=2, batch_size=8,
                                                   eval_steps=1000, save_steps=1000))
    results = compare_label_sources(wh.root, tmp_path / "prms", config, progress=lambda _: None)
    by_method = {r.method: r for r in results}
    assert "skipped" in by_method["truth"].summary  # no step truth to train on: said, not absent
    mc = by_method["mc"].summary
    assert mc["step_truth"] is False and mc["prm_f1"] is None
    for key in ("bon_acc", "vote_acc"):
        low, high = mc[f"{key}_ci"]
        assert low <= mc[key] <= high
    assert mc["bon_gain"] == pytest.approx(mc["bon_acc"] - mc["majority_acc"])
    markdown = comparison_markdown(comparison_table(results))
    mc_line = next(line for line in markdown.splitlines() if "| mc |" in line)
    assert NO_STEP_TRUTH in mc_line and "vote_acc" in markdown.splitlines()[0]
