"""Final-answer extraction: what it reads, and that hostile text costs linear time."""

from __future__ import annotations

import time

import pytest

from verifiers import extract_answer
from verifiers.constants import MAX_SCAN_CHARS


@pytest.mark.parametrize(
    "text,expected",
    [
        ("3*2=6\n12+6=18\nAnswer: 18", "18"),
        ("The final answer is: 42  \n", "42"),
        ("The answer is:\n  42", "42"),  # the answer may start on the next line
        ("Answer: 5\r\n", "5"),
        ("  > **Answer:** 7", "7"),  # markdown emphasis is not part of the answer
        ("Answer: **7**", "7"),
        ("**Final Answer: 3/4**", "3/4"),
        ("Answer: 5\nAnswer: 6", "6"),  # the last one counts
        ("so the total is 72.\n#### 72", "72"),
        ("#### 1,500  ", "1500"),
        ("####\n72", "72"),
        ("#### 1\n#### 2", "2"),
        (r"Thus $\boxed{\frac{14}{3}}$.", r"\frac{14}{3}"),
        (r"\boxed{a} then \boxed{b}", "b"),
        (r"\boxed{a} then \boxed{b", "a"),  # an unclosed last box falls back to the last closed one
        (r"\boxed{x^{2}+\{1\}}", r"x^{2}+\{1\}"),
        (r"\fbox {3}", "3"),
        ("}}" + r"\boxed{1}" + "{{", "1"),
        # "the answer is X" without a colon, as instruct models write it (SmolLM2 on GSM8K/MATH)
        ("The answer is 72.", "72"),
        ("So the answer is 18 dollars.", "18 dollars"),
        ("Adding up, the final answer is $2$.", "2"),
        ("the answer is $\\frac{1}{2}$, since both halves match", "\\frac{1}{2}"),
        ("I think the answer is 3.5 because 7/2 = 3.5", "3.5"),
        ("The answer is **42**. I hope it helps!", "42"),
        ("The answer is: 7\nLater: the answer is 9.", "9"),  # the later statement counts
        ("The answer is 9.\nAnswer: 7", "7"),
        ("the answer is found by adding the two numbers first", None),  # prose is not an answer
        # a final $...$ span is a fallback below every answer statement
        ("Thus the area is $12\\pi$.", "12\\pi"),
        ("First $x = 1$.\nSo we need more work.", None),  # only the final line's math counts
        ("Answer: 5\nThus the area is $12$.", "5"),
        ("#### 7\nThe answer is 8.", "7"),  # #### outranks a sentence
        ("She has 3 + 4 = 7 apples", None),  # the last number only under the flag
        ("no answer here", None),
        ("", None),
        (None, None),
    ],
)
def test_extract_table(text: str | None, expected: str | None) -> None:
    assert extract_answer(text) == expected


def test_last_number_is_a_flagged_fallback() -> None:
    assert extract_answer("She has 3 + 4 = 7 apples", last_number=True) == "7"
    assert extract_answer("It costs 1,250 dollars", last_number=True) == "1250"
    assert extract_answer("Answer: 5 then 6 more", last_number=True) == "5 then 6 more"  # statements first
    assert extract_answer("no digits", last_number=True) is None


def _hostile(shape: str, n: int) -> str:
    """Inputs on which the old regexes and brace scan took 0.25-2 s (quadratic in the 20 kB tail)."""
    run = min(n, MAX_SCAN_CHARS - 20)  # keep the head of the line inside the scanned tail
    return {
        "spaces": " " * n,
        "newlines": "\n" * n,
        "blank_lines": " \n" * (n // 2),
        "answer_then_newlines": "Answer:" + "\n" * n,
        "hashes_then_newlines": "####" + "\n" * n,
        "answer_spaces_x": "Answer: 1" + " " * run + "x",
        "hashes_spaces_x": "#### 1" + " " * run + "x",
        "answer_word_spaces": "answer" + " " * run + "x",
        "unclosed_boxed": "\\boxed{" * (n // 7),
        "open_braces": "\\boxed{" + "{" * n,
        "boxed_spaces": ("\\boxed" + " " * 100) * (n // 106),
        "answer_is_spaces_x": "the answer is" + " " * run + "x",
        "answer_is_spaces_words": "the answer" + " " * n + "was",
        "dollars": "$" * n,
        "unclosed_dollar": "$" + "a" * n,
    }[shape]


SHAPES = ["spaces", "newlines", "blank_lines", "answer_then_newlines", "hashes_then_newlines", "answer_spaces_x",
          "hashes_spaces_x", "answer_word_spaces", "unclosed_boxed", "open_braces", "boxed_spaces",
          "answer_is_spaces_x", "answer_is_spaces_words", "dollars", "unclosed_dollar"]  # fmt: skip
# CPU seconds of this process for one call: the linear scan takes ~2 ms on 20 kB; the quadratic one took
# 0.25-2 s. Process time does not count other processes' work, so the bound holds on a loaded machine.
CPU_BOUND_S = 0.2


@pytest.mark.parametrize("n", [20_000, 200_000])
@pytest.mark.parametrize("shape", SHAPES)
def test_hostile_text_is_linear(shape: str, n: int) -> None:
    text = _hostile(shape, n)
    start = time.process_time()
    answer = extract_answer(text)
    assert time.process_time() - start < CPU_BOUND_S
    if shape == "answer_is_spaces_x":
        assert answer == "x"
    elif shape.endswith("_spaces_x"):  # the answer line is still read, trailing text kept as written
        assert answer is not None and answer.startswith("1") and answer.endswith("x")
    else:
        assert answer is None


def test_only_the_tail_is_read() -> None:
    head = "Answer: 1\n"
    assert extract_answer(head + " " * MAX_SCAN_CHARS) is None
    assert extract_answer(head + " " * (MAX_SCAN_CHARS - len(head))) == "1"
