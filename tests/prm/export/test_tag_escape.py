"""The step tag inside step text: escaped on export, undone on read, invisible to readers that cut at the tag."""

from __future__ import annotations

import json
import random
import re
import warnings

import pytest

from prm.export import (
    read_math_shepherd,
    read_processbench,
    read_trl_stepwise,
    save_dataset,
    write_math_shepherd,
    write_processbench,
    write_trl_stepwise,
)
from prm.format.tag_escape import ESCAPE, escape_tag, unescape_tag

TAG = "ки"
# (text, what a reader gets back): the tag alone, at a step's start and end, inside a word, next to the escape
# character, Qwen's tag, the layout's own words, and a lone surrogate (UTF-8 cannot hold it: U+FFFD, documented).
TRICKY = [
    ("киев", "киев"), ("ки", "ки"), ("ки ки", "ки ки"), (" ки", " ки"), ("ки\n", "ки\n"), ("a ки b", "a ки b"),
    ("кки", "кки"), ("кии", "кии"), ("ккии", "ккии"), (ESCAPE, ESCAPE), (f"к{ESCAPE}и", f"к{ESCAPE}и"),
    (f"к{ESCAPE * 2}и{ESCAPE}", f"к{ESCAPE * 2}и{ESCAPE}"), ("<extra_0>", "<extra_0>"), ("Step 2: x", "Step 2: x"),
    ("x\nStep 2: y", "x\nStep 2: y"), ("+", "+"), ("-", "-"), ("", ""), ("😀 ки", "😀 ки"), ("\ud800", "\ufffd"),
    ("ки\udfff", "ки\ufffd"),
]


def trl_labels(item: dict) -> list[bool]:
    """The labels TRL's examples/datasets/math_shepherd.py reads: every "ки" of the input is a step's tag, and the
    label text's mark at that index (after "ки" -> one character) is the step's label."""
    inputs = item["input"].replace(TAG, "ⶻ")
    indexes = [m.start() for m in re.finditer("ⶻ", inputs)]
    assert all(item["label"][i] in "+-" for i in indexes)
    return [item["label"][i] == "+" for i in indexes]


@pytest.mark.parametrize("text,back", TRICKY)
def test_escape_removes_the_tag_and_unescape_restores_the_text(text: str, back: str) -> None:
    for tag in (TAG, "<extra_0>"):
        escaped = escape_tag(text, tag)
        assert tag not in escaped
        assert unescape_tag(escaped) == text


@pytest.mark.parametrize("text,back", TRICKY)
def test_math_shepherd_round_trips_tricky_steps(tmp_path, text: str, back: str) -> None:
    rows = [{"prompt": f"q {text}", "completions": [text, "ok", f"{text}{text}"], "labels": [True, False, False]}]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        path = write_math_shepherd(rows, tmp_path / "ms.jsonl")
    assert [str(w.message) for w in caught if "U+FFFD" in str(w.message)] == (
        [f"{tmp_path / 'ms.jsonl'} rows 0: lone surrogates (U+D800-U+DFFF, which UTF-8 cannot encode) replaced "
         "by U+FFFD; fix the text where it was decoded to keep those characters"] if back != text else [])
    assert read_math_shepherd(path) == [{"prompt": f"q {back}", "completions": [back, "ok", f"{back}{back}"],
                                         "labels": [True, False, False]}]
    item = json.loads(path.read_text(encoding="utf-8"))
    assert item["input"].count(TAG) == 3  # one tag a step, so a reader that cuts at the tag sees three steps
    assert trl_labels(item) == [True, False, False]


def test_math_shepherd_round_trips_random_strings(tmp_path) -> None:
    rng = random.Random(0)
    pieces = ["к", "и", "ки", " ", "\n", ESCAPE, "Step 2: ", "+", "-", "<extra_0>", "a"]
    rows = []
    for i in range(300):
        steps = ["".join(rng.choices(pieces, k=rng.randint(0, 8))) for _ in range(rng.randint(1, 4))]
        rows.append({"prompt": "".join(rng.choices(pieces, k=rng.randint(0, 6))), "completions": steps,
                     "labels": [rng.random() < 0.5 for _ in steps], "solution_id": f"s{i}"})
    path = write_math_shepherd(rows, tmp_path / "ms.jsonl")
    assert read_math_shepherd(path) == rows
    for row, line in zip(rows, path.read_text(encoding="utf-8").splitlines(), strict=True):
        assert trl_labels(json.loads(line)) == row["labels"]


@pytest.mark.parametrize("write,read", [(write_trl_stepwise, read_trl_stepwise), (save_dataset, read_trl_stepwise)])
def test_lone_surrogates_become_the_replacement_character(tmp_path, write, read) -> None:
    rows = [{"prompt": "q\ud800", "completions": ["a\udfffb", "ок"], "labels": [True, False]}]
    with pytest.warns(UserWarning, match=r"rows 0: lone surrogates .* replaced by U\+FFFD"):
        path = write(rows, tmp_path / "out")
    assert read(path) == [{"prompt": "q\ufffd", "completions": ["a\ufffdb", "ок"], "labels": [True, False]}]


def test_processbench_writes_lone_surrogates_as_the_replacement_character(tmp_path) -> None:
    rows = [{"prompt": "q", "completions": ["ok", "bad\ud800"], "labels": [True, False], "solution_id": "s0"}]
    with pytest.warns(UserWarning, match="lone surrogates"):
        path = write_processbench(rows, tmp_path / "pb.jsonl")
    assert read_processbench(path) == [{"id": "s0", "problem": "q", "steps": ["ok", "bad\ufffd"], "label": 1}]
