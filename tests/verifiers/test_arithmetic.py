"""Arithmetic step checks: a table of step styles, then every calculator annotation in GSM8K train."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from verifiers import check_arithmetic_step, check_steps


@pytest.mark.parametrize(
    "step,status",
    [
        ("3*2 = 6", "correct"),
        ("3*2 = 7", "incorrect"),
        ("12+7-3*2 = 12+7-6", "correct"),
        ("12+7-3*2 = 12+7-5", "incorrect"),
        ("12+7-6 = 19-6 = 13", "correct"),
        ("12+7-6 = 19-6 = 14", "incorrect"),
        ("Natalia sold 48/2 = <<48/2=24>>24 clips in May.", "correct"),
        ("Natalia sold 48/2 = <<48/2=25>>25 clips in May.", "incorrect"),
        ("She earns $1,200 * 12 = $14,400 a year.", "correct"),
        ("1,234 + 766 = 2,000", "correct"),
        ("The average is 10/3 = 3.33 hours.", "correct"),
        ("The average is 10/3 = 3.3 hours.", "correct"),
        ("The average is 10/3 = 3.43 hours.", "incorrect"),
        ("7.45 = 7.4", "correct"),  # rounded to the written precision
        ("7.5 = 7.4", "incorrect"),  # both exact: no tolerance
        ("20% * 50 = 10", "correct"),
        ("100 - 50 = <<100-50=50>>50% left", "correct"),
        (r"$\frac{1}{2} \times 8 = 4$", "correct"),
        (r"$\frac{3}{4} \cdot 12 = 9$", "correct"),
        (r"$12 \div 4 = 3$", "correct"),
        (r"$\dfrac{10}{4} = 2.5$", "correct"),
        (r"$2^{10} = 1024$", "correct"),
        ("2**10 = 1024", "correct"),
        ("-2^2 = -4", "correct"),
        ("2(3+4) = 14", "correct"),
        ("20 x 3 = 60", "correct"),
        ("560//10 = 56", "correct"),
        ("3 times 4 = 12", "unverifiable"),  # operands in words: never "4 = 12"
        ("20% of 50 = 10", "unverifiable"),
        ("x^2 = 4", "unverifiable"),
        (r"$\sqrt{16} = 4$", "correct"),
        ("So the total is 24.", "unverifiable"),
        ("5 / 0 = 3", "unverifiable"),
        ("It took 6:48-6:10 = 38 minutes", "unverifiable"),
    ],
)
def test_step_table(step: str, status: str) -> None:
    verdict = check_arithmetic_step(step)
    assert verdict.status == status, verdict
    if status == "incorrect":
        assert "=" in verdict.detail


def test_verdict_lists_checked_equations() -> None:
    verdict = check_arithmetic_step("12+7-6 = 19-6 = 13")
    assert verdict.equations == ("12+7-6 = 19-6", "19-6 = 13")


# GSM8K train lines whose calculator annotation is right but whose own text states a different,
# wrong equation (line number in train.jsonl, 1-based; the annotation): real slips in the solutions.
GSM8K_TRAIN_SLIPS = {
    (169, "<<6*3=18.00>>"),  # "6*2.5 = $18.00"
    (225, "<<4080+4080/2=6120>>"),  # "4080 + 4080 / 2 = 4000 + 2040"
    (3003, "<<80*3=240>>"),  # "8*3 = 240"
    (5397, "<<10*2=20>>"),  # "day 1 * 2 = 20"
    (6591, "<<96-70=26>>"),  # "Weeks 1-2 = 96 - 70"
    (6813, "<<52-8=44>>"),  # "50-8 = 44"
}


def test_gsm8k_train_annotations(read_jsonl: Callable[[str], list[dict]]) -> None:
    rows = read_jsonl("gsm8k/train.jsonl")
    annotations, lines, keys = [], [], []
    for number, row in enumerate(rows, start=1):
        for line in row["answer"].split("\n"):
            for annotation in re.findall(r"<<[^<>]*>>", line):
                annotations.append(annotation)
                lines.append(line)
                keys.append((number, annotation))
    assert len(annotations) > 20_000
    alone = check_steps(annotations, timeout_s=5.0)
    assert [a for a, v in zip(annotations, alone, strict=True) if v.status != "correct"] == []
    in_context = check_steps(lines, timeout_s=5.0)
    slips = {key for key, v in zip(keys, in_context, strict=True) if v.status == "incorrect"}
    assert slips == GSM8K_TRAIN_SLIPS
    correct = sum(v.status == "correct" for v in in_context)
    assert correct / len(lines) > 0.99
