"""Arithmetic step checks: a table of step styles, then every calculator annotation in GSM8K train."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable

import pytest

from tests.verifiers.calculator_sample import CORRECT_KINDS, SLIP_KINDS, calculator_lines, score_sample
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
        # Double-precision renderings of the exact value (repr of the float evaluation, %.17g, repr).
        ("1/3*5 = 1.6666666666666665", "correct"),
        ("1/3*5 = 1.6666666666666667", "correct"),
        ("2.12*17 = 36.040000000000001", "correct"),
        ("2.12*17 = 36.039999999999999", "correct"),
        ("0.1+0.2 = <<0.1+0.2=0.30000000000000004>>0.30000000000000004", "correct"),
        ("1.1 - 1 = 0.10000000000000009", "correct"),  # roundoff relative to the operands, not the result
        ("1/3 = 0.33333333333333331483", "correct"),  # the nearest double written out in full
        ("-1/3*5 = -1.6666666666666665", "correct"),
        ("1.6666666666666665 = 5/3", "correct"),
        ("1/3*5 = 1.6666866666666665", "incorrect"),  # a wrong digit where the value lives
        ("1/3*5 = 2.6666666666666665", "incorrect"),
        ("2.12*17 = 36.05", "incorrect"),
        ("2.12*17 = 3604.0000000000001", "incorrect"),  # dropped decimal point
        ("100000000 - 99999999.9 = 0.09999999403953552", "correct"),  # cancellation: what Python prints
        ("100000000 - 99999999.9 = 0.19999999403953552", "incorrect"),
        ("12345678901234567 = 12345678901234568", "incorrect"),  # integers are exact: no double band
        ("0.000000000000001 = 0.000000000000002", "incorrect"),  # 1 significant digit: not a rendering
        # Rounding to fewer digits than the value needs is checked as before: within one unit of the last.
        ("260/3 = 86", "incorrect"),
        ("260/3 = 86.67", "correct"),
        ("260/3 = 86.66", "correct"),  # truncated
        ("260/3 = 86.65", "incorrect"),
        ("1/3 = 0.33", "correct"),
        ("1/3 = 0.3", "correct"),
        ("1/3 = 0.34", "correct"),  # rounded up: the existing one-unit rule
        ("1/3 = 0.35", "incorrect"),
        ("1/3*5 = 1.666666666666", "correct"),
        ("1/3*5 = 1.666666666665", "incorrect"),  # 13 digits: a rounding, off by more than one unit
        # Only ASCII digits make numbers: another script's digit or a superscript is a symbol, never a crash.
        ("3 = .²", "unverifiable"),
        ("12٣ = 123", "unverifiable"),
        ("", "unverifiable"),
        (None, "unverifiable"),
    ],
)
def test_step_table(step: str | None, status: str) -> None:
    verdict = check_arithmetic_step(step)
    assert verdict.status == status, verdict
    if status == "incorrect":
        assert "=" in verdict.detail


def test_seeded_calculator_sample_meets_the_targets() -> None:
    """Issue 10's targets on the seeded sample of tests/verifiers/calculator_sample.py: <= 0.2% false alarms on
    correct lines (float renderings included), >= 90% of slips caught."""
    lines = calculator_lines(n_correct=1_500, n_slips=300, seed=0)
    assert Counter(ln.kind for ln in lines if ln.correct).keys() == set(CORRECT_KINDS)
    assert Counter(ln.kind for ln in lines if not ln.correct).keys() == set(SLIP_KINDS)
    score = score_sample(lines, [check_arithmetic_step(ln.text) for ln in lines])
    assert (score.n_correct, score.n_slips) == (1_500, 300)
    assert score.false_alarm_rate <= 0.002, score.alarms[:10]
    assert score.slip_recall >= 0.90, score.missed[:10]
    assert score.correct_unverifiable <= 0.02 * score.n_correct  # the lines are read, not skipped


def test_sample_is_seeded() -> None:
    assert calculator_lines(50, 10, seed=3) == calculator_lines(50, 10, seed=3)
    assert calculator_lines(50, 10, seed=3) != calculator_lines(50, 10, seed=4)


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


def test_exact_incorrect_stops_before_the_symbolic_pass() -> None:
    verdict = check_arithmetic_step(r"2+2 = 5 and $\sqrt{16} = 4$")
    assert (verdict.status, verdict.equations) == ("incorrect", ("2+2 = 5",))


def test_skipped_equations_are_noted_next_to_the_checked_ones() -> None:
    verdict = check_arithmetic_step("3*2 = 6 and 5 / 0 = 3")
    assert verdict.status == "correct" and verdict.equations == ("3*2 = 6",)
    assert verdict.detail == "skipped 5/0 = 3: division by zero"
