"""Reference-guided first errors (verifiers.reference): what a problem knows, what a step writes, where it errs."""

from __future__ import annotations

import time
from collections.abc import Callable
from fractions import Fraction

import pytest

from verifiers import StepVerdict, build_reference, locate_first_error
from verifiers.constants import MAX_STEP_CHARS
from verifiers.reference import _MARKER, _WORD, MAX_KNOWN_VALUES, WrittenNumber, answer_value, written_numbers

U = StepVerdict("unverifiable", "no equation found")
C = StepVerdict("correct")

# GSM8K test #0 (Janet's ducks), as the warehouse stores it: annotations kept.
QUESTION = ("Janet's ducks lay 16 eggs per day. She eats three for breakfast every morning and bakes muffins for her "
            "friends every day with four. She sells the remainder at the farmers' market daily for $2 per fresh duck "
            "egg. How much in dollars does she make every day at the farmers' market?")
SOLUTION = ("Janet sells 16 - 3 - 4 = <<16-3-4=9>>9 duck eggs a day.\n"
            "She makes 9 * 2 = $<<9*2=18>>18 every day at the farmer's market.")
REF = build_reference(QUESTION, "18", SOLUTION)


def _values(*xs: object) -> set[Fraction]:
    return {Fraction(x) for x in xs}  # type: ignore[arg-type]


def test_written_numbers_read_latex_percent_thousands_and_skip_list_markers() -> None:
    step = r"1. So \(1/3 \times 18 = 6\) and $1,500 less 20\% is \$1,200 (Step 2)."
    found = written_numbers(step)
    assert found is not None
    assert [(n.text, n.percent) for n in found] == [("1", False), ("3", False), ("18", False), ("6", False),
                                                    ("1,500", False), ("20", True), ("1,200", False)]
    assert [n.value for n in written_numbers(r"\frac{1024}{20} = 51.2") or ()] == [1024, 20, Fraction("51.2")]
    assert [n.decimals for n in written_numbers("51.2 and 3") or ()] == [1, 0]
    assert written_numbers("   ") == () and written_numbers("no numbers here") == ()


def test_a_step_that_cannot_be_read_gives_none() -> None:
    assert written_numbers("1" * 200) is None  # beyond the digit limit
    assert written_numbers("1 + " * (MAX_STEP_CHARS // 4 + 1)) is None  # beyond the step length limit


def test_the_reference_knows_question_words_solution_values_and_gold() -> None:
    ref = build_reference("Twice a dozen, two thirds and sixteen of 25% more.", "7", "3*4=<<3*4=12>>12 and 20*.4=8")
    assert _values(2, 12, 3, "2/3", 16, 25, "1/4", 4, 20, "0.4", 8, 7, 0, 1) <= set(ref.values)
    assert ref.source == "reference" and ref.gold == 7
    assert build_reference("Sue has 3 apples.", "3").source == "gold"
    assert build_reference("Sue has 3 apples.", None).source == "question"
    assert build_reference(None, None).values == (0, 1)  # 0 and 1 are always known


def test_stripped_annotations_lose_no_value_of_the_reference() -> None:
    stripped = SOLUTION.replace("<<16-3-4=9>>", "").replace("<<9*2=18>>", "")
    assert build_reference(QUESTION, "18", stripped).values == REF.values
    assert _values(16, 3, 4, 9, 2, 18) <= set(REF.values)


def test_known_values_are_capped() -> None:
    question = " ".join(str(k) for k in range(3_000))  # each text under the step length limit
    ref = build_reference(question, None, " ".join(str(k) for k in range(3_000, 6_000)))
    assert len(ref.values) == MAX_KNOWN_VALUES


@pytest.mark.parametrize(("text", "known"), [
    ("33.33", True),  # 100/3 rounded
    ("33.4", True),  # within one unit of the last place (rounded up), as verifiers.rounding accepts
    ("33.5", False),  # beyond it
    ("-9", True),  # a sign is ignored
    ("50%", True),  # stands for 1/2
    ("0.9", False),
])
def test_knows_rounded_decimals_percentages_and_signs(text: str, known: bool) -> None:
    ref = build_reference("Split $100 among 3; 9 left; half of it.", None, "Each gets 100/3 = $<<100/3=33.33>>33.33")
    (number,) = written_numbers(text) or (None,)
    assert isinstance(number, WrittenNumber)
    assert ref.knows(number) is known


def test_the_wrong_final_answer_is_never_known() -> None:
    (nine,) = written_numbers("9") or ()
    assert REF.knows(nine) and not REF.knows(nine, unless=Fraction(9)) and not REF.knows(nine, unless=Fraction(-9))


@pytest.mark.parametrize(("answer", "value"), [
    ("$1,200", Fraction(1200)), ("18 dollars.", Fraction(18)), (r"\frac{14}{3}", Fraction(14, 3)),
    ("-2.5%", Fraction(-1, 40)), ("x+1", None), (r"1 \pm \sqrt{19}", None), ("2 pi", None), (r"\text{(E)}", None),
    ("3, 4", None), ("", None), (None, None), ("1" * 200, None),
])
def test_answer_value(answer: str | None, value: Fraction | None) -> None:
    assert answer_value(answer) == value


STEPS = ["Janet eats 3 and bakes with 4 eggs, so 16 - 3 - 4 = 9 are left.",
         "She sells them for $2 each: 9 * 2 = $18.",
         "The answer is 18."]


def test_a_right_answer_makes_every_step_right() -> None:
    v = locate_first_error(STEPS, [C, C, U], REF, "18", True)
    assert (v.first_error, v.rule) == (-1, "right_answer")
    assert [s.status for s in v.steps] == ["correct"] * 3


def test_a_right_answer_with_a_false_equation_is_wrong_there() -> None:
    wrong = StepVerdict("incorrect", "9*2 = 19 (left is 18, right is 19)")
    v = locate_first_error(STEPS, [C, wrong, U], REF, "18", True)
    assert (v.first_error, v.rule, v.steps[1]) == (1, "arithmetic", wrong)


def test_a_wrong_answer_is_wrong_at_the_first_unknown_number() -> None:
    steps = ["Janet has 16 eggs.", "She eats 3 and bakes with 4, so 16 - 3 = 13 are left.", "13 * 2 = 26.",
             "The answer is 26."]
    v = locate_first_error(steps, [U, U, C, U], REF, "26", False)
    assert (v.first_error, v.rule) == (1, "unknown_value")
    assert v.steps[1].detail == "writes 13: not the question's or the reference's"
    assert [s.status for s in v.steps] == ["correct", "incorrect", "unverifiable", "unverifiable"]


def test_a_false_equation_before_the_first_unknown_number_comes_first() -> None:
    wrong = StepVerdict("incorrect", "16-3-4 = 8")
    steps = ["16 - 3 - 4 = 8, wait, 9 eggs.", "She sells 9 for 9 * 2 = 19."]
    assert locate_first_error(steps, [wrong, U], REF, "19", False).first_error == 0


def test_a_wrong_answer_equal_to_a_reference_value_is_still_unknown() -> None:
    steps = ["She has 16 - 3 - 4 = 9 eggs.", "Each egg sells for $2.", "So she makes 9 dollars."]
    v = locate_first_error(steps, [C, U, U], REF, "9", False)
    assert (v.first_error, v.steps[0].detail) == (0, "writes 9: the wrong final answer")


def test_a_wrong_answer_with_only_known_numbers_is_wrong_at_its_last_step() -> None:
    steps = ["She has 16 eggs.", "She sells 4 of them.", "The answer is $\\boxed{4}$ wait no, she sells 3."]
    ref = build_reference(QUESTION, "18", SOLUTION)
    v = locate_first_error(steps, [U, U, U], ref, "(E)", False)  # an answer that is no number drops nothing
    assert (v.first_error, v.rule) == (None, "wrong_answer_unlocated")
    assert [s.status for s in v.steps] == ["unverifiable", "unverifiable", "incorrect"]


def test_an_unreadable_step_stops_the_search() -> None:
    steps = ["She has 16 eggs.", "1" * 200, "She makes 50 dollars."]
    v = locate_first_error(steps, [U, U, U], REF, "50", False)
    assert (v.first_error, [s.status for s in v.steps]) == (None, ["unverifiable", "unverifiable", "incorrect"])


def test_without_a_graded_answer_only_the_arithmetic_decides() -> None:
    wrong = StepVerdict("incorrect", "9*2 = 19")
    assert locate_first_error(STEPS, [C, wrong, U], REF, None, None).first_error == 1
    assert locate_first_error(STEPS, [C, C, C], None, "18", True).first_error == -1
    v = locate_first_error(STEPS, [C, U, wrong], REF, "19", None)
    assert (v.first_error, v.rule, v.steps) == (None, "arithmetic_only", (C, U, wrong))


def test_gold_only_locates_from_the_question_numbers() -> None:
    ref = build_reference(QUESTION, "18")
    steps = ["16 - 3 - 4 = 9 eggs are left.", "She makes 9 * 2 = $18."]
    v = locate_first_error(steps, [C, C], ref, "18", True)
    assert v.first_error == -1
    v = locate_first_error(["16 - 3 - 4 = 9 eggs are left.", "9 * 3 = 27."], [C, C], ref, "27", False)
    assert (v.first_error, v.steps[0].detail) == (0, "writes 9: not the question's or the gold's")


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="one per step"):
        locate_first_error(STEPS, [C], REF, "18", True)
    assert locate_first_error([], [], REF, "18", True).first_error is None


# --- hostile text: CPU time stays linear (the module's regexes are also run by tests/test_hostile_regexes.py) ---

HOSTILE_UNITS = ["1.\n", " ", "\n", "step 1 ", "-*#", "1,000,", "\\frac{1}{2}", "{", "<<1+1=2>>", "99%", "two thirds ",
                 "\t\t1)", "### 12.", "$", "\\(", "a"]


@pytest.mark.parametrize("unit", HOSTILE_UNITS)
def test_reading_hostile_text_stays_linear(unit: str) -> None:
    megabyte = unit * (1_000_000 // len(unit))
    start = time.process_time()
    _MARKER.sub(" ", megabyte)
    _WORD.findall(megabyte)
    regex_s = time.process_time() - start
    step = unit * ((MAX_STEP_CHARS - 1) // len(unit))  # the longest step read at all
    start = time.process_time()
    ref = build_reference(step, step, step)
    locate_first_error([step] * 4, [U] * 4, ref, step, False)
    answer_value(step)
    step_s = time.process_time() - start
    assert regex_s < 0.5, f"{unit!r}: {regex_s:.2f} CPU s on a megabyte"
    assert step_s < 2.0, f"{unit!r}: {step_s:.2f} CPU s on six texts of {len(step)} characters"


# --- real data ---------------------------------------------------------------------------------------------------

def test_every_gsm8k_reference_knows_its_own_numbers_and_gold(read_jsonl: Callable[[str], list[dict]]) -> None:
    rows = read_jsonl("gsm8k/test.jsonl")
    start = time.process_time()
    for row in rows:
        body, _, gold = row["answer"].rpartition("####")
        gold = gold.strip().replace(",", "")
        ref = build_reference(row["question"], gold, body)
        assert ref.gold is not None and abs(ref.gold) in ref.values, row["question"]
        for line in body.splitlines():
            assert all(ref.knows(n) for n in written_numbers(line) or ()), line
    assert time.process_time() - start < 60  # ~5 s for the 1,319 problems

