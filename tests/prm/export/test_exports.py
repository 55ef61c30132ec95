"""Exports: each format round-trips (write, read back, equal), bad rows fail with what to fix, writes are atomic."""

from __future__ import annotations

import json
import math
import os

import pytest

from prm.export import (
    HubUnavailableError,
    check_stepwise_rows,
    push_to_hub,
    read_math_shepherd,
    read_processbench,
    read_trl_stepwise,
    save_dataset,
    write_math_shepherd,
    write_processbench,
    write_trl_stepwise,
)
from prm.export.math_shepherd import from_math_shepherd, to_math_shepherd

HARD = [
    {"prompt": "3+4*2 =", "completions": ["4*2 = 8", "3+8 = 11"], "labels": [True, True],
     "problem_id": "p0", "solution_id": "s0"},
    {"prompt": "9-2-5 =", "completions": ["9-2 = 7", "7-5 = 3", "Step 3: so 3"], "labels": [True, False, False],
     "problem_id": "p1", "solution_id": "s1"},
    {"prompt": "Janet’s ducks lay 16 eggs? ", "completions": ["16 - 3 = 13\n13 - 4 = 9", "9 * 2 = 18"],
     "labels": [False, True], "problem_id": "p2", "solution_id": "s2"},
]
SOFT = [{"prompt": "2*3+1 =", "completions": ["2*3 = 6", "6+1 = 8"], "labels": [0.875, 0.0]},
        {"prompt": "5-1 =", "completions": ["5-1 = 4"], "labels": [1.0 / 3.0]}]


@pytest.mark.parametrize("rows", [HARD, SOFT], ids=["hard", "soft"])
def test_trl_jsonl_round_trip(tmp_path, rows):
    path = write_trl_stepwise(rows, tmp_path / "out" / "train.jsonl")
    assert read_trl_stepwise(path) == rows
    first = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    assert set(first) >= {"prompt", "completions", "labels"}  # TRL's stepwise-supervision columns


@pytest.mark.parametrize("rows", [HARD, SOFT], ids=["hard", "soft"])
def test_datasets_folder_round_trip(tmp_path, rows):
    folder = save_dataset(rows, tmp_path / "ds")
    assert read_trl_stepwise(folder) == rows
    save_dataset(rows[:1], folder)  # overwriting swaps the whole folder
    assert read_trl_stepwise(folder) == rows[:1]
    assert [p.name for p in tmp_path.iterdir()] == ["ds"]  # no temp or old folder left behind


def test_math_shepherd_text_matches_the_dataset_layout():
    row = {"prompt": "1+2 = ?", "completions": ["1+2 = 3", "The answer is: 4"], "labels": [True, False]}
    assert to_math_shepherd([row]) == [{"input": "1+2 = ? Step 1: 1+2 = 3 ки\nStep 2: The answer is: 4 ки",
                                        "label": "1+2 = ? Step 1: 1+2 = 3 +\nStep 2: The answer is: 4 -"}]


def test_math_shepherd_round_trip(tmp_path):
    assert read_math_shepherd(write_math_shepherd(HARD, tmp_path / "ms.jsonl")) == HARD


def test_math_shepherd_reader_refuses_a_label_that_does_not_match_the_input():
    item = to_math_shepherd(HARD[:1])[0]
    with pytest.raises(ValueError, match="not the input with each tag replaced"):
        from_math_shepherd(item | {"label": item["label"].replace("+", "?", 1)})


@pytest.mark.parametrize("labels,first_error", [([True, True, True], -1), ([False, True, True], 0),
                                                ([True, False, True], 1), ([True, True, False], 2)])
def test_processbench_label_is_the_first_wrong_step(tmp_path, labels, first_error):
    row = {"prompt": "q", "completions": ["a", "b", "c"], "labels": labels, "solution_id": "s9"}
    path = write_processbench([row], tmp_path / "pb.jsonl")
    assert read_processbench(path) == [{"id": "s9", "problem": "q", "steps": ["a", "b", "c"], "label": first_error}]


def test_processbench_round_trip(tmp_path):
    path = write_processbench(HARD, tmp_path / "pb.jsonl")
    back = read_processbench(path)
    assert back == [{"id": r["solution_id"], "problem": r["prompt"], "steps": r["completions"],
                     "label": [-1, 1, 0][i]} for i, r in enumerate(HARD)]
    assert read_processbench(write_processbench(HARD, tmp_path / "again.jsonl")) == back


@pytest.mark.parametrize("row,match", [
    ({"prompt": "q", "completions": [], "labels": []}, "no completions"),
    ({"prompt": "q", "completions": ["a", "b"], "labels": [True]}, "1 labels for 2 completions"),
    ({"prompt": "q", "completions": ["a"], "labels": [math.nan]}, "NaN or outside"),
    ({"prompt": "q", "completions": ["a"], "labels": [1.5]}, "NaN or outside"),
    ({"prompt": "q", "completions": ["a", "b"], "labels": [True, 0.5]}, "mixes with other kinds"),
    ({"prompt": "q", "completions": "a", "labels": [True]}, "list of step strings"),
    ({"completions": ["a"], "labels": [True]}, "missing"),
])
def test_bad_rows_fail_with_what_to_fix(tmp_path, row, match):
    with pytest.raises(ValueError, match=match):
        write_trl_stepwise([row], tmp_path / "x.jsonl")
    assert not (tmp_path / "x.jsonl").exists()


def test_rows_with_different_keys_or_label_kinds_are_refused():
    with pytest.raises(ValueError, match="differ from the first row"):
        check_stepwise_rows([HARD[0], {k: v for k, v in HARD[1].items() if k != "solution_id"}])
    with pytest.raises(ValueError, match="mix hard"):
        check_stepwise_rows([{"prompt": "q", "completions": ["a"], "labels": [True]},
                             {"prompt": "q", "completions": ["a"], "labels": [0.5]}])


@pytest.mark.parametrize("writer", [write_math_shepherd, write_processbench])
def test_one_mark_formats_refuse_soft_labels(tmp_path, writer):
    with pytest.raises(ValueError, match="export hard labels"):
        writer(SOFT, tmp_path / "x.jsonl")


def test_math_shepherd_refuses_a_problem_that_would_not_split_back(tmp_path):
    numbered = [{"prompt": "see Step 1: here", "completions": ["a"], "labels": [True]}]
    with pytest.raises(ValueError, match="could not be split back"):
        write_math_shepherd(numbered, tmp_path / "x.jsonl")


def test_jsonl_exports_are_strict_json_with_null_for_nan(tmp_path):
    rows = [{**HARD[0], "score": math.nan, "extra": [math.inf, 1.0]}]
    path = write_trl_stepwise(rows, tmp_path / "train.jsonl")
    strict = json.loads(path.read_text(encoding="utf-8"), parse_constant=lambda word: pytest.fail(f"{word} in JSON"))
    assert strict["score"] is None and strict["extra"] == [None, 1.0]
    assert read_trl_stepwise(path) == [{**HARD[0], "score": None, "extra": [None, 1.0]}]


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temp(tmp_path, monkeypatch):
    path = write_trl_stepwise(HARD, tmp_path / "train.jsonl")
    before = path.read_bytes()

    def fail(*_args):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="disk full"):
        write_trl_stepwise(SOFT, path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["train.jsonl"]


def test_reader_names_the_damaged_line(tmp_path):
    path = write_trl_stepwise(HARD, tmp_path / "train.jsonl")
    path.write_text(path.read_text(encoding="utf-8") + "{not json\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"train.jsonl:4: not JSON"):
        read_trl_stepwise(path)


@pytest.fixture
def online(monkeypatch):
    """Offline mode off (CI machines may set it), so each test reaches the check it is about."""
    from huggingface_hub import constants

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)


def test_push_to_hub_in_offline_mode_says_what_to_do(tmp_path, monkeypatch, online):
    folder = save_dataset(HARD, tmp_path / "ds")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(HubUnavailableError, match="HF_HUB_OFFLINE is set"):
        push_to_hub(folder, "someone/prm-labels", token="hf_test")


def test_push_to_hub_without_a_token_says_what_to_do(tmp_path, monkeypatch, online):
    import prm.export.hub as hub

    folder = save_dataset(HARD, tmp_path / "ds")
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setattr(hub, "_stored_token", lambda: None)
    with pytest.raises(HubUnavailableError, match=r"no Hugging Face token.*HF_TOKEN"):
        push_to_hub(folder, "someone/prm-labels")


def test_push_to_hub_without_network_says_what_to_do(tmp_path, monkeypatch, online):
    import prm.export.hub as hub

    folder = save_dataset(HARD, tmp_path / "ds")

    def unreachable(*_args, **_kwargs):
        raise OSError("Network is unreachable")

    monkeypatch.setattr(hub.socket, "create_connection", unreachable)
    with pytest.raises(HubUnavailableError, match=r"cannot reach .*Network is unreachable"):
        push_to_hub(folder, "someone/prm-labels", token="hf_test")
