"""The training set from the warehouse: split by problem, easy-to-hard, labels, drops, balance, errors."""

from __future__ import annotations

import math

import pytest

from prm.training import TrainingSet, TrainingSetConfig, build_training_set, check_rows, stratified_splits
from tests.prm.training.conftest import N_PROBLEMS, solution_steps
from warehouse import Warehouse, connect


def _split_problems(ts: TrainingSet) -> dict[str, set[str]]:
    return {s: {r["problem_id"] for r in ts.split(s)} for s in ("train", "val", "test")}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_no_problem_is_in_two_splits(labeled_wh: Warehouse, seed: int) -> None:
    ts = build_training_set(labeled_wh.root, TrainingSetConfig(method="sympy", val_share=0.25, test_share=0.25,
                                                               split_seed=seed))
    by_split = _split_problems(ts)
    assert not by_split["train"] & by_split["val"]
    assert not by_split["train"] & by_split["test"]
    assert not by_split["val"] & by_split["test"]
    assert sum(map(len, by_split.values())) == N_PROBLEMS  # sympy labels every problem
    assert all(by_split.values()), by_split  # 24 problems at 50/25/25 fill every split at these seeds
    splits = stratified_splits(connect(labeled_wh.root), ts.config)
    for row in ts.rows:  # every row's split is the one evaluation reads
        assert row["split"] == splits(row["problem_id"], row["n_gold_steps"])


def test_easy_to_hard_tests_on_longer_problems(labeled_wh: Warehouse) -> None:
    ts = build_training_set(labeled_wh.root, TrainingSetConfig(method="sympy", train_max_steps=2, val_share=0.5,
                                                               test_share=0.0))
    assert {r["n_gold_steps"] for r in ts.split("test")} == {3, 4}
    assert {r["n_gold_steps"] for r in ts.split("train") + ts.split("val")} == {1, 2}
    assert ts.split("val"), "val still comes from the short problems"


def test_easy_to_hard_also_holds_out_short_problems_in_distribution(labeled_wh: Warehouse) -> None:
    ts = build_training_set(labeled_wh.root, TrainingSetConfig(method="sympy", train_max_steps=2, val_share=0.3,
                                                               test_share=0.3, split_seed=1))
    assert {r["n_gold_steps"] for r in ts.split("test")} == {1, 2, 3, 4}  # in distribution and easy-to-hard
    assert {r["n_gold_steps"] for r in ts.split("train") + ts.split("val")} == {1, 2}


def test_rows_are_trl_stepwise_supervision(labeled_wh: Warehouse) -> None:
    hard = build_training_set(labeled_wh.root, TrainingSetConfig(method="truth"))
    row = next(r for r in hard.rows if r["solution_id"] == "p05-s1")
    steps, truth = solution_steps(5, 1)
    assert (row["prompt"], row["completions"], row["labels"]) == ("5 plus 2", steps, truth)
    assert {k for k in row} == {"prompt", "completions", "labels", "problem_id", "solution_id", "split",
                                "n_gold_steps"}
    soft = build_training_set(labeled_wh.root, TrainingSetConfig(method="mc", label_kind="soft"))
    row = next(r for r in soft.rows if r["solution_id"] == "p05-s1")
    assert row["labels"] == pytest.approx([0.9, 0.1])


def test_unlabeled_and_partly_labeled_solutions_are_dropped_and_counted(labeled_wh: Warehouse) -> None:
    ts = build_training_set(labeled_wh.root, TrainingSetConfig(method="mc"))
    ids = {r["solution_id"] for r in ts.rows}
    assert "p01-s0" not in ids and "p03-s1" not in ids
    assert (ts.stats.dropped_unlabeled, ts.stats.dropped_partial) == (1, 1)
    assert sum(ts.stats.solutions.values()) == 2 * N_PROBLEMS - 2


def test_consensus_only_keeps_solutions_with_consensus_labels(labeled_wh: Warehouse) -> None:
    ts = build_training_set(labeled_wh.root, TrainingSetConfig(method="sympy", consensus_only=True))
    assert {int(r["problem_id"][1:]) % 2 for r in ts.rows} == {0}
    assert ts.stats.dropped_not_consensus == N_PROBLEMS  # two solutions of each of the 12 odd problems


def test_downsample_balances_train_solutions_and_leaves_val_and_test(labeled_wh: Warehouse) -> None:
    wh = labeled_wh
    extra = [{"solution_id": "p00-s2", "problem_id": "p00", "sample_idx": 2, "text": "0+0 = 0", "n_steps": 1,
              "status": "ok", "model": "m"}]  # one more all-good solution: the kinds are unequal
    wh.write("solutions", extra, source="arith", day="2026-11-21")
    wh.write("steps", [{"solution_id": "p00-s2", "problem_id": "p00", "step_idx": 0, "text": "0+0 = 0",
                        "char_start": 0, "char_end": 7, "is_correct_truth": True}], source="arith", day="2026-11-21")
    plain = build_training_set(wh.root, TrainingSetConfig(method="truth", split_seed=3))
    balanced = build_training_set(wh.root, TrainingSetConfig(method="truth", split_seed=3, balance="downsample"))

    def kinds(rows: list[dict]) -> tuple[int, int]:
        wrong = sum(not all(r["labels"]) for r in rows)
        return len(rows) - wrong, wrong

    right, wrong = kinds(plain.split("train"))
    assert right != wrong
    assert kinds(balanced.split("train")) == (min(right, wrong),) * 2
    assert balanced.stats.dropped_by_balance == abs(right - wrong)
    assert balanced.split("val") == plain.split("val") and balanced.split("test") == plain.split("test")


def test_weight_balance_sets_inverse_frequency_weights(labeled_wh: Warehouse) -> None:
    ts = build_training_set(labeled_wh.root, TrainingSetConfig(method="truth", balance="weight"))
    good, bad = ts.stats.good_steps["train"], ts.stats.bad_steps["train"]
    assert ts.stats.class_weights == pytest.approx(((good + bad) / (2 * bad), (good + bad) / (2 * good)))
    assert ts.stats.class_weights[0] > 1 > ts.stats.class_weights[1]  # bad steps are the rarer class here


def test_a_damaged_saved_row_is_named_with_its_line(labeled_wh: Warehouse, tmp_path) -> None:
    folder = build_training_set(labeled_wh.root, TrainingSetConfig(method="mc")).save(tmp_path / "ts")
    lines = (folder / "rows.jsonl").read_text().splitlines()
    (folder / "rows.jsonl").write_text("\n".join([lines[0], '{"prompt": ', *lines[2:]]) + "\n")
    with pytest.raises(ValueError, match=r"rows\.jsonl:2"):
        TrainingSet.load(folder)


def test_save_and_load_round_trip(labeled_wh: Warehouse, tmp_path) -> None:
    ts = build_training_set(labeled_wh.root, TrainingSetConfig(method="mc", label_kind="soft", balance="weight"))
    back = TrainingSet.load(ts.save(tmp_path / "ts"))
    assert back == ts


@pytest.mark.parametrize("config,match", [
    (TrainingSetConfig(method="omegaprm"), r"no step_labels.hard_label for method 'omegaprm'; run its labeling"),
    (TrainingSetConfig(method="sympy", label_kind="soft"), r"no step_labels.soft_label .* set label_kind='hard'"),
    (TrainingSetConfig(method="truth", source="gsm8k"), r"no labeled solutions in the train split"),
])
def test_bad_choices_say_what_to_do(labeled_wh: Warehouse, config: TrainingSetConfig, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        build_training_set(labeled_wh.root, config)


@pytest.mark.parametrize("config,match", [
    (TrainingSetConfig(method="truth", val_share=0, test_share=0), "all 1 step labels are good, so a PRM would"),
    (TrainingSetConfig(method="truth", consensus_only=True), "no consensus labels; materialize"),
])
def test_one_class_only_and_missing_consensus_are_refused(wh: Warehouse, config: TrainingSetConfig,
                                                          match: str) -> None:
    kw = {"source": "arith", "day": "2026-11-20"}
    wh.write("problems", [{"problem_id": "p", "task": "t", "split": "s", "question": "q", "gold_answer": "1"}], **kw)
    wh.write("solutions", [{"solution_id": "s", "problem_id": "p", "sample_idx": 0, "text": "a", "n_steps": 1,
                            "status": "ok", "model": "m"}], **kw)
    wh.write("steps", [{"solution_id": "s", "problem_id": "p", "step_idx": 0, "text": "a", "char_start": 0,
                        "char_end": 1, "is_correct_truth": True}], **kw)
    with pytest.raises(ValueError, match=match):
        build_training_set(wh.root, config)


def test_truth_without_exact_truth_is_refused(wh: Warehouse) -> None:
    with pytest.raises(ValueError, match="no step has is_correct_truth"):
        build_training_set(wh.root, TrainingSetConfig(method="truth"))


@pytest.mark.parametrize("bad", [math.nan, 1.5, -0.2])
def test_nan_or_out_of_range_soft_labels_are_refused(labeled_wh: Warehouse, bad: float) -> None:
    """The warehouse refuses such rows at write time; a connection with foreign labels is still checked."""
    con = connect(labeled_wh.root)
    con.register("raw_labels", labeled_wh.read("step_labels"))
    con.execute(f"CREATE OR REPLACE VIEW step_labels AS SELECT * REPLACE (CASE WHEN solution_id = 'p05-s1' "
                f"AND step_idx = 0 THEN CAST('{bad}' AS DOUBLE) ELSE soft_label END AS soft_label) FROM raw_labels")
    with pytest.raises(ValueError, match=r"solution p05-s1 \(method mc\): label .* (NaN|outside \[0, 1\])"):
        build_training_set(con, TrainingSetConfig(method="mc", label_kind="soft"))


@pytest.mark.parametrize("row,kind,match", [
    ({"prompt": "q", "completions": [], "labels": []}, "hard", "empty step list"),
    ({"prompt": "q", "completions": ["a", "b"], "labels": [True]}, "hard", "2 steps but 1 labels"),
    ({"prompt": "q", "completions": ["a"], "labels": [math.nan]}, "soft", "NaN or infinite"),
    ({"prompt": "q", "completions": ["a"], "labels": [1.2]}, "soft", r"outside \[0, 1\]"),
    ({"prompt": "q", "completions": ["a"], "labels": [0.4]}, "hard", "use label_kind='soft'"),
    ({"prompt": "q", "completions": ["a"], "labels": [None]}, "hard", "a step has no label"),
    ({"completions": ["a"], "labels": [True]}, "hard", r"missing \['prompt'\]"),
    ({"prompt": "q", "completions": ["a"], "labels": [True], "split": "dev"}, "hard", "split 'dev'"),
])
def test_bad_rows_are_refused_with_the_row_named(row: dict, kind: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        check_rows([{"prompt": "ok", "completions": ["x"], "labels": [True]}, row], kind)
    with pytest.raises(ValueError, match="row 1"):
        check_rows([{"prompt": "ok", "completions": ["x"], "labels": [True]}, row], kind)


def test_config_refuses_unknown_method() -> None:
    with pytest.raises(ValueError, match="not a label method; use one of"):
        TrainingSetConfig(method="majority")


def test_the_training_set_records_the_table_versions_it_read_and_they_read_it_again(labeled_wh: Warehouse,
                                                                                   tmp_path) -> None:
    config = TrainingSetConfig(method="mc", train_max_steps=None)
    ts = build_training_set(labeled_wh.root, config)
    assert ts.warehouse_versions == labeled_wh.versions() and ts.warehouse_versions["step_labels"] is not None
    assert TrainingSet.load(ts.save(tmp_path / "ts")).warehouse_versions == ts.warehouse_versions
    labels = labeled_wh.read("step_labels").to_pylist()
    flipped = [{**r, "soft_label": 1.0 - r["soft_label"], "hard_label": not r["hard_label"]}
               for r in labels if r["method"] == "mc"]
    labeled_wh.write("step_labels", flipped, source=flipped[0]["source"], day=flipped[0]["day"],
                     replace=True)  # the data moves on: a new version of step_labels
    assert build_training_set(labeled_wh.root, config).rows != ts.rows
    again = build_training_set(connect(labeled_wh.root, versions=ts.warehouse_versions), config)
    assert again.rows == ts.rows and again.warehouse_versions == ts.warehouse_versions
