"""The label-source comparison: one PRM per method, all scored on the same held-out solutions."""

from __future__ import annotations

from pathlib import Path

import pytest

from prm.best_of_n import CONSTANT, LENGTH, MAJORITY, ORACLE
from prm.evaluation import IN_DISTRIBUTION, heldout_solutions, split_test_sets
from prm.evaluation.heldout import EASY_TO_HARD
from prm.experiments.label_sources import ComparisonConfig, compare_label_sources, comparison_markdown, comparison_table
from prm.experiments.pooled import pooled_comparison, with_truth_differences
from prm.training import PRMTrainConfig, TrainingSetConfig, stratified_splits
from warehouse import Warehouse, connect

from .conftest import DAY, solution_steps

N_SAMPLES = 4  # solutions per problem: best-of-4 on the test problems


def _fill(wh: Warehouse) -> None:
    """30 problems, 4 solutions each; odd solutions go wrong at their last step; `mc` labels every step
    (hard, as truth would), `sympy` only the even problems' solutions (so its train set differs)."""
    problems, solutions, steps, labels = [], [], [], []
    for p in range(30):
        pid = f"p{p:02d}"
        n = 1 + p % 4
        problems.append({"problem_id": pid, "task": "arith_chain", "split": "test", "question": f"{p} plus {n}",
                         "gold_answer": str(p + n - 1), "n_gold_steps": n})
        for s in range(N_SAMPLES):
            texts, truth = solution_steps(p, s)
            sid = f"{pid}-s{s}"
            first = truth.index(False) if False in truth else -1
            solutions.append({"solution_id": sid, "problem_id": pid, "sample_idx": s, "text": "\n".join(texts),
                              "n_steps": n, "is_correct": all(truth), "first_error_truth": first,
                              "final_answer": texts[-1].split(" = ")[1], "status": "ok", "model": "m"})
            start = 0
            for k, (t, ok) in enumerate(zip(texts, truth, strict=True)):
                steps.append({"solution_id": sid, "problem_id": pid, "step_idx": k, "text": t,
                              "char_start": start, "char_end": start + len(t), "is_correct_truth": ok})
                start += len(t) + 1
                base = {"solution_id": sid, "problem_id": pid, "step_idx": k, "labeler_version": "t",
                        "status": "labeled", "cost_rollouts": 8}
                labels.append({**base, "method": "mc", "hard_label": ok, "soft_label": 0.9 if ok else 0.1})
                if p % 2 == 0:
                    labels.append({**base, "method": "sympy", "hard_label": ok, "cost_rollouts": 0})
    kw = {"source": "arith", "day": DAY}
    wh.write("problems", problems, **kw)
    wh.write("solutions", solutions, **kw)
    wh.write("steps", steps, **kw)
    wh.write("step_labels", labels, **kw)


def test_every_method_is_scored_on_the_same_heldout_solutions(wh: Warehouse, tiny_base: Path, tmp_path: Path) -> None:
    _fill(wh)
    config = ComparisonConfig(methods=("truth", "mc", "sympy", "omegaprm"),
                              data=TrainingSetConfig(method="truth", val_share=0.3, test_share=0.3),
                              train=PRMTrainConfig(base_model=str(tiny_base), max_steps=4, batch_size=8,
                                                   eval_steps=1000, save_steps=1000))
    results = compare_label_sources(wh.root, tmp_path / "prms", config, progress=lambda _: None)
    by_method = {r.method: r for r in results}
    assert list(by_method) == ["truth", "mc", "sympy", "omegaprm"]
    assert "run its labeling asset first" in by_method["omegaprm"].summary["skipped"]  # reported, not absent
    tested = [{s["solution_id"] for s in r.scores} for r in results if r.scores]
    assert len(tested) == 3 and tested[0] == tested[1] == tested[2]  # one held-out set for every method
    assert by_method["truth"].summary["label_f1"] == 1.0 and by_method["truth"].summary["rollouts_per_step"] == 0
    assert by_method["mc"].summary["label_f1"] == 1.0 and by_method["mc"].summary["rollouts_per_step"] == 8
    assert by_method["sympy"].summary["train_solutions"] < by_method["mc"].summary["train_solutions"]
    for name in ("truth", "mc", "sympy"):
        summary = by_method[name].summary
        assert 0 <= summary["prm_f1"] <= 1 and 0 <= summary["bon_acc"] <= 1 and summary["bon_n"] == N_SAMPLES
        for key in ("prm_f1", "bon_acc", "bon_gain"):  # every headline figure carries its interval over problems
            low, high = summary[f"{key}_ci"]
            assert low <= summary[key] <= high
        assert summary["bon_gain"] == pytest.approx(summary["bon_acc"] - summary["majority_acc"])
    table = comparison_table(results)
    names = [row["method"] for row in table]
    assert {CONSTANT, LENGTH, MAJORITY, ORACLE} <= set(names)  # baselines and references, on the same test set
    oracle = next(row for row in table if row["method"] == ORACLE)
    assert oracle["bon_acc"] == 1.0  # solution 0 of every problem is right
    markdown = comparison_markdown(table)
    assert markdown.count("\n") == len(table) + 1 and "skipped" in markdown


def test_seeds_pool_into_one_row_per_method_and_test_set(wh: Warehouse, tiny_base: Path, tmp_path: Path) -> None:
    _fill(wh)
    data = TrainingSetConfig(method="truth", val_share=0.3, test_share=0.3, train_max_steps=3)

    def run(seed: int, out: str) -> list:
        train = PRMTrainConfig(base_model=str(tiny_base), max_steps=4, batch_size=8, eval_steps=1000,
                               save_steps=1000, seed=seed)
        return compare_label_sources(wh.root, tmp_path / out, ComparisonConfig(methods=("truth",), data=data,
                                                                                train=train), progress=lambda _: None)

    seeds = {0: run(0, "a"), 1: run(1, "b")}
    again = run(0, "c")

    def scores(results: list) -> list:
        return [s["scores"] for s in results[0].scored["test"]]

    assert scores(again) == scores(seeds[0])  # a fixed seed repeats its PRM
    assert scores(seeds[1]) != scores(seeds[0])  # another seed changes it
    assert set(seeds[0][0].by_test) == {IN_DISTRIBUTION, EASY_TO_HARD}  # 4-step problems are easy-to-hard
    con = connect(wh.root)
    heldout = heldout_solutions(con, stratified_splits(con, data), source="arith")
    table = pooled_comparison(seeds, split_test_sets(heldout["test"], data.train_max_steps))
    truth = [r for r in table if r["method"] == "truth"]
    assert [r["test"] for r in truth] == [IN_DISTRIBUTION, EASY_TO_HARD] and all(r["seeds"] == 2 for r in truth)
    for row in truth:
        for key in ("prm_f1", "bon_acc", "step_sensitivity"):
            low, high = row[f"{key}_ci"]
            assert low <= row[key] <= high
    length = next(r for r in table if r["method"] == LENGTH and r["test"] == IN_DISTRIBUTION)
    assert length["step_sensitivity"] == 0.5  # a prior over position ties every sibling pair
    # every other scorer is compared with the truth-trained PRM on the same problems, paired
    truth_in = truth[0]
    assert "prm_f1_vs_truth" not in truth_in
    if truth_in["step_sensitivity"] is not None:
        assert length["step_sensitivity_vs_truth"] == pytest.approx(0.5 - truth_in["step_sensitivity"])
    assert length["prm_f1_vs_truth"] == pytest.approx(length["prm_f1"] - truth_in["prm_f1"])
    low, high = length["prm_f1_vs_truth_ci"]
    assert low <= length["prm_f1_vs_truth"] <= high
    assert "prm_f1_vs_truth" in comparison_markdown(table)
    single = with_truth_differences(comparison_table(seeds[0]), seeds[0], data.train_max_steps)
    assert any("bon_acc_vs_truth" in r for r in single if r["method"] == LENGTH)
