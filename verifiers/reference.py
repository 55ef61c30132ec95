"""Where a solution goes wrong, judged against what its problem says is true: the question's numbers, the reference
solution's values and the gold answer.

Rules (chosen on ProcessBench's validation rows, ``benchmarks/reference_labeler.py``; on the 156 GSM8K ones they
find the human first error of 44 of 75 wrong solutions and accept 80 of 81 right ones, F1 0.74, where the arithmetic
check alone has 0.13):

* **Right final answer**: a solution that ends on the gold answer is taken as right throughout, unless the exact
  arithmetic check (:mod:`verifiers.arithmetic`) finds a false equation; then that step is its first error.
* **Wrong final answer**: the first error is the earlier of the first false equation and the first step that
  writes a number the problem does not know (:class:`Reference`): neither a number of the question (digits or
  words: "sixteen", "two thirds", "twice"), nor a value of the reference solution (its numbers, the values of its
  equations' sides and of GSM8K calculator annotations), nor the gold answer, nor 0 or 1. The value of the wrong
  final answer is never known (a reference value it happens to equal is still the wrong answer). A written
  decimal may be a rounding of a known value (``33.33`` for 100/3), a percentage may stand for its fraction
  (``20%`` for 0.2), and a sign is ignored. When no step writes an unknown number, the last step (which states
  the wrong answer) is wrong and the earlier ones are undecided.
* **No gold answer, or a final answer that could not be graded**: the plain arithmetic check alone.

Values a solution derives correctly but the reference never writes (another order of the same sums) count as
unknown: on the validation rows, also knowing every sum, difference, product and quotient of two known values
found fewer first errors (it knows the wrong ones too). Numbers are read with the verifiers' own tokenizer from
the text after the LaTeX rewrite of :mod:`verifiers.equations` (``\\frac``, ``\\times``, ``\\$``, thousands
separators), list markers ("1.", "Step 2:") left out; the only values computed are whole equation sides of the
question and reference and final answers, with the bounded exact parser of :mod:`verifiers.expression` (never
``eval``/``sympify``). Every call here is bounded by the limits of :mod:`verifiers.constants` and
:data:`MAX_KNOWN_VALUES` (linear in the text, each text at most ``MAX_STEP_CHARS``), so it is safe in-process on
model text; the arithmetic verdicts it takes come from the verifier pool, under its timeouts.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from verifiers.constants import MAX_STEP_CHARS
from verifiers.equations import find_equations, plain_text
from verifiers.expression import ExpressionError, Token, evaluate, tokenize
from verifiers.verdict import StepVerdict, has_text

__all__ = ["ALWAYS_KNOWN", "MAX_KNOWN_VALUES", "Reference", "ReferenceVerdict", "WrittenNumber", "answer_value",
           "build_reference", "locate_first_error", "written_numbers"]

# Numbers every solution may write without the problem stating them ("1 hour", "0 left"): 0 and 1 only. On the
# validation rows, also knowing 2..10 or unit constants (12, 24, 60, 100, 365...) hid more first errors than it
# excused.
ALWAYS_KNOWN: frozenset[Fraction] = frozenset({Fraction(0), Fraction(1)})
# Values one reference holds at most (question, solution, gold): a GSM8K reference has about 15, a MATH one a few
# dozen; the cap bounds what a hostile problem row can make every lookup cost.
MAX_KNOWN_VALUES = 4_096

# Words for numbers in a question ("sixteen seconds", "twice as much", "a dozen").
_NUMBER_WORDS: dict[str, int] = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
    "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
    "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100, "thousand": 1000, "million": 10**6,
    "dozen": 12, "twice": 2, "double": 2, "triple": 3, "thrice": 3, "once": 1, "pair": 2, "couple": 2,
}  # fmt: skip
# Fraction words: "half" is 1/2 and 2, "two thirds" 2/3 and 3.
_FRACTION_WORDS: dict[str, int] = {
    "half": 2, "halves": 2, "third": 3, "thirds": 3, "quarter": 4, "quarters": 4, "fourth": 4, "fourths": 4,
    "fifth": 5, "fifths": 5, "sixth": 6, "sixths": 6, "seventh": 7, "sevenths": 7, "eighth": 8, "eighths": 8,
    "ninth": 9, "ninths": 9, "tenth": 10, "tenths": 10,
}  # fmt: skip
# A word of letters; possessive, so a scan is one pass.
_WORD = re.compile(r"[A-Za-z]++")
# List markers and step numbers, which are no values: "1." or "2)" opening a line (after optional bullets or
# hashes), "Step 3". Every repeat is possessive or bounded and each branch starts at a fixed anchor or word.
_MARKER = re.compile(r"(?im)^[ \t]*+[-*#]*+[ \t]*+\d{1,2}[.)](?!\d)|\bstep[ \t]*+\d{1,2}\b")


@dataclass(frozen=True)
class WrittenNumber:
    """One number literal a step writes: its value, its decimal places (a rounding tolerance), whether a ``%``
    follows it, and the text as written."""

    value: Fraction
    decimals: int
    percent: bool
    text: str

    def readings(self) -> tuple[Fraction, ...]:
        """The values it may stand for: itself, and its fraction when it is a percentage."""
        return (self.value, self.value / 100) if self.percent else (self.value,)


def _blank_markers(text: str) -> str:
    return _MARKER.sub(lambda m: " " * len(m.group()), text)


def _number_tokens(text: str) -> list[tuple[Token, bool]]:
    """NUM tokens of the plain text with whether a ``%`` follows; ExpressionError beyond the size limits."""
    tokens = tokenize(_blank_markers(plain_text(text)))
    return [(t, k + 1 < len(tokens) and tokens[k + 1].kind == "PCT") for k, t in enumerate(tokens) if t.kind == "NUM"]


def written_numbers(step_text: str) -> tuple[WrittenNumber, ...] | None:
    """The numbers ``step_text`` writes, in order; None when it cannot be read (too long, a number beyond the
    digit limit): then nothing can be said about it.

    >>> [(n.text, n.percent) for n in written_numbers(r"So \\(18 - 6 = 12\\) left, 20% of $1,500 (step 2).")]
    [('18', False), ('6', False), ('12', False), ('20', True), ('1,500', False)]
    >>> [str(n.value) for n in written_numbers(r"1. Half: \\(\\frac{1}{2} \\times 8 = 4\\)")]
    ['1', '2', '8', '4']
    """
    if not has_text(step_text):
        return ()
    if len(step_text) > MAX_STEP_CHARS:
        return None
    try:
        found = _number_tokens(step_text)
    except ExpressionError:
        return None
    return tuple(WrittenNumber(t.value, t.decimals, pct, t.text) for t, pct in found if t.value is not None)


def _word_values(text: str) -> list[Fraction]:
    words = [w.lower() for w in _WORD.findall(text)]
    out: list[Fraction] = []
    for i, word in enumerate(words):
        if word in _NUMBER_WORDS:
            out.append(Fraction(_NUMBER_WORDS[word]))
        elif word in _FRACTION_WORDS:
            denominator = _FRACTION_WORDS[word]
            numerator = _NUMBER_WORDS.get(words[i - 1], 1) if i else 1
            out += [Fraction(denominator), Fraction(numerator, denominator)]
    return out


def _side_values(text: str) -> list[Fraction]:
    """Values of both sides of every equation the text states (``20*.4=8`` gives 8 and 8), and of each side of its
    calculator annotations."""
    out: list[Fraction] = []
    try:
        equations = find_equations(text)
    except ExpressionError:
        return out
    for eq in equations:
        if eq.problem:
            continue
        for side in (eq.lhs, eq.rhs):
            try:
                out.append(evaluate(list(side)))
            except (ExpressionError, ArithmeticError, ValueError):
                continue
    return out


def _text_values(text: str | None, *, words: bool) -> list[Fraction]:
    if not has_text(text) or len(text) > MAX_STEP_CHARS:
        return []
    values: list[Fraction] = []
    try:
        found = _number_tokens(text)
    except ExpressionError:
        found = []
    for token, percent in found:
        if token.value is not None:
            values.append(token.value)
            if percent:
                values.append(token.value / 100)
    if words:
        values += _word_values(text)
    return values + _side_values(text)


_MATH_KINDS = frozenset({"NUM", "OP", "LP", "RP", "PCT"})
# Words after a number that make it something else than a number with a unit ("2 pi", "3 sqrt 2").
_NOT_UNITS = frozenset({"pi", "sqrt", "i", "e", "inf", "infinity", "and", "or", "times", "plus", "minus", "over",
                        "divided", "by", "to", "of", "squared", "cubed", "mod", "thousand", "million", "billion",
                        "hundred", "dozen", "half", "percent"})


def answer_value(answer: str | None) -> Fraction | None:
    """The number a final answer states (``"$1,200"``, ``"18 dollars"``, ``"\\frac{14}{3}"``), or None when it
    is no single number (``"x+1"``, ``"1 \\pm \\sqrt{19}"``, ``"2 pi"``, ``"(E)"``).

    >>> answer_value("$1,200"), answer_value("18 dollars."), answer_value(r"\\frac{14}{3}"), answer_value("-2.5%")
    (Fraction(1200, 1), Fraction(18, 1), Fraction(14, 3), Fraction(-1, 40))
    >>> [answer_value(a) for a in ("x+1", r"1 \\pm \\sqrt{19}", "2 pi", r"\\text{(E)}", "3, 4", "")]
    [None, None, None, None, None, None]
    """
    if not has_text(answer) or len(answer) > MAX_STEP_CHARS:
        return None
    try:
        tokens = tokenize(plain_text(answer))
    except ExpressionError:
        return None
    last = max((k for k, t in enumerate(tokens) if t.kind in _MATH_KINDS), default=None)
    if last is None or any(t.kind not in _MATH_KINDS for t in tokens[: last + 1]):
        return None  # a letter, a backslash or a comma inside the expression
    tail = tokens[last + 1 :]
    if any(t.kind == "WORD" and (len(t.text) < 2 or t.text.lower() in _NOT_UNITS) for t in tail) or any(
            t.kind == "SEP" and t.text not in ".!" for t in tail):
        return None
    try:
        return evaluate(tokens[: last + 1])
    except (ExpressionError, ArithmeticError, ValueError):
        return None


@dataclass(frozen=True)
class Reference:
    """What a problem says is true: the known values (absolute values, sorted) and the gold answer's value.

    ``source`` says what it was built from: ``"reference"`` (a reference solution), ``"gold"`` (only the gold
    answer and the question) or ``"question"`` (the question alone; no first error is located from it).
    """

    values: tuple[Fraction, ...]
    gold: Fraction | None
    source: str

    def knows(self, number: WrittenNumber, *, unless: Fraction | None = None) -> bool:
        """Whether the problem knows what ``number`` writes (one of its readings, sign ignored, a decimal within
        one unit of its last written place); a reading equal to ``unless`` (the wrong final answer) is unknown."""
        unit = Fraction(1, 10**number.decimals) if number.decimals else None
        for reading in number.readings():
            value = abs(reading)
            if unless is not None and value == abs(unless):
                continue
            i = bisect_left(self.values, value)
            if i < len(self.values) and self.values[i] == value:
                return True
            if unit is not None:
                near = [self.values[j] for j in (i - 1, i) if 0 <= j < len(self.values)]
                if any(abs(v - value) < unit and (unless is None or v != abs(unless)) for v in near):
                    return True
        return False


def _capped(values: Iterable[Fraction]) -> tuple[Fraction, ...]:
    out: set[Fraction] = set(ALWAYS_KNOWN)
    for v in values:
        if len(out) >= MAX_KNOWN_VALUES:
            break
        out.add(abs(v))
    return tuple(sorted(out))


def build_reference(question: str | None, gold_answer: str | None, gold_solution: str | None = None) -> Reference:
    """The known values of a problem: its question's numbers (digits and words), its reference solution's values
    and its gold answer's value.

    >>> ref = build_reference("Sue has eighteen apples and eats two thirds of them.", "6",
    ...                       "She eats 18*2/3 = <<18*2/3=12>>12 apples, 18 - 12 = 6 are left.")
    >>> ref.source, [str(v) for v in ref.values]
    ('reference', ['0', '2/3', '1', '2', '3', '6', '12', '18'])
    >>> build_reference("Sue has 18 apples.", "6").source, build_reference("Sue has 18 apples.", None).source
    ('gold', 'question')
    """
    gold = answer_value(gold_answer)
    values = _text_values(question, words=True)
    source = "question"
    if has_text(gold_solution):
        values += _text_values(gold_solution, words=True)
        source = "reference"
    if gold is not None:
        values.append(gold)
        source = "reference" if source == "reference" else "gold"
    return Reference(_capped(values), gold, source)


@dataclass(frozen=True)
class ReferenceVerdict:
    """Where a solution goes wrong: ``first_error`` (-1: nowhere, None: not located) and a verdict per step (the
    method's decision where it made one: ``correct``/``incorrect`` with the reason, else ``unverifiable``).

    ``rule`` names the rule that decided: ``right_answer``, ``unknown_value``, ``arithmetic``,
    ``wrong_answer_unlocated`` or ``arithmetic_only`` (no gold answer, or it could not be graded).
    """

    first_error: int | None
    steps: tuple[StepVerdict, ...]
    rule: str


def _arithmetic_only(arithmetic: Sequence[StepVerdict]) -> ReferenceVerdict:
    first = None
    for k, verdict in enumerate(arithmetic):
        if verdict.status == "unverifiable":
            break
        if verdict.status == "incorrect":
            first = k
            break
    else:
        first = -1
    return ReferenceVerdict(first, tuple(arithmetic), "arithmetic_only")


def _located(n: int, first: int, reason: StepVerdict, before: str, rule: str) -> ReferenceVerdict:
    steps = [StepVerdict("correct", before) if first < 0 or k < first else StepVerdict.unverifiable(
        "after the first error") for k in range(n)]
    if first >= 0:
        steps[first] = reason
    return ReferenceVerdict(first, tuple(steps), rule)


def locate_first_error(steps: Sequence[str], arithmetic: Sequence[StepVerdict], reference: Reference | None,
                       answer: str | None, answer_correct: bool | None) -> ReferenceVerdict:
    """The first error of a solution whose steps are ``steps``, given each step's exact arithmetic verdict
    (:func:`verifiers.check_steps`), what its problem knows (``reference``), its final answer and whether that
    answer is right (None: not graded). See the module docstring for the rules.

    >>> ref = build_reference("Errol paid $2,400 for a computer and 2 monitors. The computer cost $1,100.", "650",
    ...                       "2400-1100=<<2400-1100=1300>>1300 for the monitors, 1300/2=<<1300/2=650>>650 each.")
    >>> steps = ["The computer costs $1,100.", "The monitors cost 2400 - 1200 = 1200.", "Each costs 1200/2 = 600."]
    >>> v = locate_first_error(steps, [StepVerdict("unverifiable")] * 3, ref, "600", False)
    >>> v.first_error, v.rule, v.steps[1].detail
    (1, 'unknown_value', "writes 1200: not the question's or the reference's")
    >>> locate_first_error(steps, [StepVerdict("unverifiable")] * 3, ref, "650", True).first_error
    -1
    """
    if len(arithmetic) != len(steps):
        raise ValueError(f"{len(steps)} steps but {len(arithmetic)} arithmetic verdicts; give one per step")
    n = len(steps)
    arith_first = next((k for k, v in enumerate(arithmetic) if v.status == "incorrect"), None)
    if n == 0:
        return ReferenceVerdict(None, (), "arithmetic_only")
    if answer_correct is None or reference is None:
        return _arithmetic_only(arithmetic)
    if answer_correct:
        if arith_first is not None:
            return _located(n, arith_first, arithmetic[arith_first], "the final answer is right", "arithmetic")
        return _located(n, -1, StepVerdict("correct"), "the final answer is right", "right_answer")
    wrong = answer_value(answer)
    if wrong is not None and wrong == reference.gold:
        wrong = None  # graded wrong for another reason (a unit, a form): its number stays known
    known = "the question's or the reference's" if reference.source == "reference" else "the question's or the gold's"
    stop = n if arith_first is None else arith_first
    for k in range(stop):
        numbers = written_numbers(steps[k])
        if numbers is None:  # an unreadable step: nothing is located from it on
            return _unlocated(n, arith_first if arith_first is not None else n - 1, arithmetic)
        unknown = next((x for x in numbers if not reference.knows(x, unless=wrong)), None)
        if unknown is not None:
            why = "the wrong final answer" if wrong is not None and abs(unknown.value) == abs(wrong) else f"not {known}"
            return _located(n, k, StepVerdict("incorrect", f"writes {unknown.text}: {why}"),
                            "every number it writes is known", "unknown_value")
    if arith_first is not None:
        return _located(n, arith_first, arithmetic[arith_first], "every number it writes is known", "arithmetic")
    return _unlocated(n, n - 1, arithmetic)


def _unlocated(n: int, wrong_at: int, arithmetic: Sequence[StepVerdict]) -> ReferenceVerdict:
    """A wrong solution whose first error is not located: the step at ``wrong_at`` is wrong (a false equation, or
    the last step, which states the wrong answer: the first error or after it); the others are undecided."""
    steps = [StepVerdict.unverifiable("the final answer is wrong; the first error is not located")] * n
    steps[wrong_at] = arithmetic[wrong_at] if arithmetic[wrong_at].status == "incorrect" else StepVerdict(
        "incorrect", "states a wrong final answer (the first error or after it)")
    return ReferenceVerdict(None, tuple(steps), "wrong_answer_unlocated")
