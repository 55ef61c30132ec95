"""The shared equation finder and tally (verifiers.equations) and the bounded parser they build on."""

from __future__ import annotations

from fractions import Fraction

import pytest

from verifiers.equations import Equation, Tally, check_each, find_equations
from verifiers.expression import ExpressionError, exact_power, tokenize
from verifiers.verdict import StepVerdict, has_text


def test_find_equations_reads_annotations_latex_and_chains() -> None:
    found = [str(e) for e in find_equations(r"So 48/2 = <<48/2=24>>24 and $\frac{1}{2} \times 8 = 4 = 2+2$.")]
    assert found == ["48/2 = 24", "((1)/(2))*8 = 4", "4 = 2+2"]


def test_operand_in_words_is_a_problem_not_a_claim() -> None:
    (eq,) = find_equations("3 times 4 = 12")
    assert eq.problem == "operand continues into words"


def _eqs(text: str) -> list[Equation]:
    return find_equations(text)


def test_tally_stops_at_the_first_incorrect_and_keeps_what_held() -> None:
    decisions = iter([("correct", ""), ("incorrect", "bad"), ("correct", "")])
    tally = check_each(_eqs("1 = 1; 2 = 3; 4 = 4"), lambda eq: next(decisions))
    assert tally.verdict() == StepVerdict("incorrect", "bad", ("1 = 1", "2 = 3"))


def test_tally_notes_errors_and_unverifiable_decisions() -> None:
    def decide(eq: Equation) -> tuple[str, str]:
        if str(eq) == "1 = 1":
            raise ExpressionError("x" * 50)
        return "unverifiable", f"{eq}: undecided"

    tally = check_each(_eqs("1 = 1; 2 = 2"), decide, note_chars=20)
    assert tally.skipped == ["1 = 1: " + "x" * 13, "2 = 2: undecided"]
    assert tally.verdict() == StepVerdict.unverifiable("; ".join(tally.skipped))
    assert Tally().verdict() == StepVerdict.unverifiable("no equation found")


def test_errors_outside_the_caught_ones_propagate() -> None:
    with pytest.raises(ZeroDivisionError):
        check_each(_eqs("1 = 1"), lambda eq: (1 // 0, ""))  # type: ignore[func-returns-value]


def test_exact_power_refuses_before_it_allocates() -> None:
    assert exact_power(Fraction(2, 3), Fraction(3)) == Fraction(8, 27)
    for base, exponent in ((2, Fraction(1, 2)), (3, 10**6), (0, -1), (3, 4_000)):
        with pytest.raises(ExpressionError):
            exact_power(Fraction(base), Fraction(exponent))


@pytest.mark.parametrize("text", [".²", "1.²", "٣", "x .² y", "12٣"])
def test_tokenizer_reads_only_ascii_digits_as_numbers(text: str) -> None:
    assert all(t.kind != "NUM" or t.text.isascii() for t in tokenize(text))


def test_has_text() -> None:
    assert has_text("1 = 1") and not any(has_text(x) for x in (None, "", " \n", 3))
