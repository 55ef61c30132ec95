"""Hostile model text: segmentation and answer extraction stay linear on a megabyte of adversarial input.

Bounds are CPU seconds of this process (``time.process_time``), which another process on the machine cannot
inflate; the quadratic regex this guards against took 19.7 s on 80k characters.
"""

from __future__ import annotations

import time

import pytest

from prm.format import segment
from prm.format.steps import MAX_PIECES
from verifiers.extract import extract_answer

MB = 1_000_000
CPU_BOUND_S = 0.2

HOSTILE = {
    "answer_then_spaces": "answer" + " " * MB + "x",
    "final_answer_then_spaces": "final" + " " * MB + "answer" + " " * 10 + "x",
    "answer_is_then_tabs": "Answer is" + "\t" * MB,
    "answer_words": "answer " * (MB // 7),
    "answer_lines": "answer\n" * (MB // 7),
    "newline_then_spaces": "\n" + " " * MB + "x",
    "blank_lines": "\n \n" * (MB // 3),
    "hashes": "#### " * (MB // 5),
    "unclosed_boxed": "\\boxed{" * (MB // 7),
    "braces": "{" * (MB // 2) + "}" * (MB // 2),
    "one_long_line": "12+7 = 19 " * (MB // 10),
    "one_char_lines": "a\n" * (MB // 2),
    "one_char_paragraphs": "a\n\n" * (MB // 3),
}


def test_text_past_the_piece_cap_is_one_last_step_and_nothing_is_dropped() -> None:
    seg = segment("a\n" * (MAX_PIECES + 10) + "  ")
    assert len(seg) == MAX_PIECES + 1
    assert seg.steps[-1] == "\n".join("a" * 10)
    assert "".join(seg.steps).count("a") == MAX_PIECES + 10


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_segment_and_extract_answer_are_linear_on_hostile_text(name: str) -> None:
    text = HOSTILE[name]
    assert len(text) >= 0.9 * MB
    for fn in (segment, extract_answer):
        start = time.process_time()
        fn(text)
        spent = time.process_time() - start
        assert spent < CPU_BOUND_S, f"{fn.__name__} spent {spent:.2f} CPU s on {name}"


def test_answer_only_lines_are_still_recognised() -> None:
    text = "4+9 = 13\nAnswer is: 13\nfinal  answer = 13\nThe answer: 13\n#### 13\nAnswer the rest: 2+2 = 4"
    assert segment(text).steps == ("4+9 = 13", "Answer the rest: 2+2 = 4")


@pytest.mark.parametrize("ending", ["The answer is: 72", "The answer is 72.", "So the answer is 72.",
                                    "**The final answer is $72$.**", "Therefore, the final answer is: $\\boxed{72}$."])
def test_an_answer_line_is_never_a_step_with_or_without_a_colon(ending: str) -> None:
    """The reward server scored "The answer is 72." as an extra step and "The answer is: 72" not (0.030 vs 0.530)."""
    seg = segment(f"8*9 = 72\n{ending}")
    assert seg.steps == ("8*9 = 72",)
    assert extract_answer(seg.text) == "72"


HOSTILE_ANSWER_IS = {
    "answer_is_spaces_x": "the answer is" + " " * MB + "x",
    "answer_spaces_is": "the answer" + " " * MB + "is 3",
    "answer_is_colon_spaces": "answer is:" + " " * MB,
    "dollars": "$" * MB,
    "dollar_runs": "$ a " * (MB // 4),
    "unclosed_dollar": "$" + "a" * MB,
    "answer_is_repeated": "the answer is " * (MB // 14),
    "digits_and_commas": "1," * (MB // 2),
}


@pytest.mark.parametrize("name", sorted(HOSTILE_ANSWER_IS))
def test_new_answer_patterns_are_linear_on_hostile_text(name: str) -> None:
    text = HOSTILE_ANSWER_IS[name]
    for fn in (segment, extract_answer, lambda t: extract_answer(t, last_number=True)):
        start = time.process_time()
        fn(text)
        spent = time.process_time() - start
        assert spent < CPU_BOUND_S, f"spent {spent:.2f} CPU s on {name}"


@pytest.mark.parametrize("value", [12345, 1.5, b"Answer: 3", ["Answer: 3"]])
def test_extract_answer_names_a_non_text_argument(value: object) -> None:
    with pytest.raises(TypeError, match="extract_answer takes the model's text"):
        extract_answer(value)  # type: ignore[arg-type]
