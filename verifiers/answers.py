"""Final-answer grading: ``grade_answer(prediction, gold) -> bool | None`` with a hard time limit, and
:func:`grade_verdicts`, the same as typed verdicts that say why a pair could not be graded.

Plain numbers (GSM8K's ``1,234`` vs ``1234``, ``18.0`` vs ``18``), with or without a unit word after them
(``18 dollars`` vs ``18``, ``540 meters`` vs ``540``), are compared in-process with exact rationals: that path
is bounded by :data:`~verifiers.constants.MAX_NUMBER_DIGITS`. Everything else (fractions, LaTeX, sets/tuples,
units in LaTeX) goes to Math-Verify in a worker of :mod:`verifiers.pool`, with
Math-Verify's own ``signal.alarm`` timeouts disabled (they fail off the main thread) and the pool's
wall-clock limit in their place. Math-Verify hands only digit/operator strings to SymPy's
``parse_expr`` and reads everything else with its LaTeX grammar, so no model text is executed; what
such strings can still do (``9**9**9**9``) is cut off by the pool.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from fractions import Fraction

from verifiers.constants import DEFAULT_GRADE_TIMEOUT_S, MAX_ANSWER_CHARS, MAX_NUMBER_DIGITS, NUMBER_REL_TOL
from verifiers.verdict import StepVerdict

__all__ = ["grade_answer", "grade_answers", "grade_in_process", "grade_verdicts"]

# Linear on any text, not only on the fullmatch it is used with: spaces are read only after a sign or a dollar,
# or where no space precedes them, so a search cannot restart inside a run of spaces (issue 38).
_PLAIN_NUMBER = re.compile(r"(?:-\$?+|\$|(?<!\s))\s*+(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)")
# A unit after a plain number ("18 dollars", "540 square meters"): one to three words of letters, each after
# required spaces, so the runs cannot trade characters. Words that change the value or make it an expression
# are no units ("2 pi", "18 thousand", "3 and 4").
_UNIT_SUFFIX = re.compile(r"(?<![ \t])(?:[ \t]++[A-Za-z]{2,}+){1,3}$")  # starts a run of spaces: never inside one
_NOT_UNITS = frozenset({"pi", "sqrt", "inf", "infinity", "and", "or", "times", "plus", "minus", "over", "divided",
                        "by", "to", "of", "squared", "cubed", "mod", "factorial", "hundred", "thousand", "million",
                        "billion", "trillion", "dozen", "half", "halves", "third", "thirds", "quarter", "quarters",
                        "percent", "tenths", "hundredths"})
_MATH_DELIMITED = re.compile(r"\$|\\\(|\\\[|\\boxed|\\fbox")
# Plain-text spellings Math-Verify's LaTeX grammar would read as products of letters (pi -> p*i).
_PLAIN_WORDS = (
    (re.compile(r"(?<![\\A-Za-z])pi(?![A-Za-z])"), r"\\pi"),
    (re.compile(r"(?<![\\A-Za-z])sqrt\(([^()]{0,200})\)"), r"\\sqrt{\1}"),
    (re.compile(r"(?<![\\A-Za-z])sqrt(?![A-Za-z])"), r"\\sqrt"),
    (re.compile(r"(?<![\\A-Za-z])(?:infinity|inf)(?![A-Za-z])"), r"\\infty"),
)


def _plain_number(text: str) -> Fraction | None:
    """The value of a plain number, with or without a unit word after it (units are graded the same way on every
    path: Math-Verify read "540 meters" as 540 but "18 dollars" as a product of letters).

    >>> _plain_number("18 dollars"), _plain_number("1,234"), _plain_number("2 pi")
    (Fraction(18, 1), Fraction(1234, 1), None)
    """
    text = text.replace("\\$", "$").replace("\\!", "").strip().rstrip(".")
    if len(text) > MAX_NUMBER_DIGITS:
        return None
    unit = _UNIT_SUFFIX.search(text)
    if unit and not _NOT_UNITS.intersection(unit.group(0).lower().split()):
        text = text[: unit.start()]
    if not _PLAIN_NUMBER.fullmatch(text):
        return None
    return Fraction(text.replace("$", "").replace(",", "").replace(" ", ""))


def _numbers_equal(pred: Fraction, gold: Fraction) -> bool:
    if pred.denominator == 1 and gold.denominator == 1:
        return pred == gold
    return abs(pred - gold) <= NUMBER_REL_TOL * max(1, abs(gold))


def _as_math(text: str) -> str:
    """Wrap bare answer text in ``$...$`` so Math-Verify reads it as LaTeX, as it expects of golds."""
    text = text.replace("\\$", "").strip()  # an escaped dollar is currency, not a math delimiter
    if _MATH_DELIMITED.search(text):
        return text
    for pattern, repl in _PLAIN_WORDS:
        text = pattern.sub(repl, text)
    return f"${text}$"


def _screen(pair: object) -> tuple[str, str] | StepVerdict:
    """The ``(prediction, gold)`` strings of a pair, or the verdict of a pair that cannot be graded."""
    if not isinstance(pair, tuple | list) or len(pair) != 2:
        return StepVerdict.unverifiable(f"not a (prediction, gold) pair: {type(pair).__name__}")
    prediction, gold = pair
    if not isinstance(gold, str):
        reason = f"gold answer is {type(gold).__name__}, not text: store gold answers as strings"
        return StepVerdict.unverifiable(reason)
    if not isinstance(prediction, str) or not prediction.strip():
        return StepVerdict.unverifiable("no prediction")
    if len(prediction) > MAX_ANSWER_CHARS or len(gold) > MAX_ANSWER_CHARS:
        return StepVerdict.unverifiable(f"answer longer than {MAX_ANSWER_CHARS} characters")
    if "\x00" in prediction or "\x00" in gold:
        return StepVerdict.unverifiable("NUL character in answer")
    return prediction, gold


def _verdict(grade: bool) -> StepVerdict:
    return StepVerdict("correct") if grade else StepVerdict("incorrect", "not equal to the gold answer")


def grade_in_process(pair: tuple[str | None, str]) -> StepVerdict:
    """Math-Verify on one ``(prediction, gold)`` pair in the calling process, without a time limit.

    Only for pool workers; use :func:`grade_verdicts`, which bounds the time.
    """
    screened = _screen(pair)
    if isinstance(screened, StepVerdict):
        return screened
    prediction, gold = screened
    from math_verify import parse, verify  # heavy (SymPy): imported in workers only

    logging.getLogger("math_verify").setLevel(logging.ERROR)  # the "timeout disabled" notice is intended
    gold_parsed = parse(_as_math(gold), parsing_timeout=None)  # type: ignore[arg-type]
    if not gold_parsed:
        return StepVerdict.unverifiable("Math-Verify could not read the gold answer")
    pred_parsed = parse(_as_math(prediction), parsing_timeout=None)  # type: ignore[arg-type]
    if not pred_parsed:
        return StepVerdict.unverifiable("Math-Verify could not read the prediction")
    return _verdict(bool(verify(gold_parsed, pred_parsed, timeout_seconds=None)))


def _fast(pair: object) -> StepVerdict | None:
    """The verdict of the in-process paths (unreadable pairs, plain numbers); None sends it to the pool."""
    screened = _screen(pair)
    if isinstance(screened, StepVerdict):
        return screened
    pred_num, gold_num = _plain_number(screened[0]), _plain_number(screened[1])
    if pred_num is not None and gold_num is not None:
        return _verdict(_numbers_equal(pred_num, gold_num))
    return None


def grade_verdicts(pairs: Sequence[tuple[str | None, str]],
                   timeout_s: float = DEFAULT_GRADE_TIMEOUT_S) -> list[StepVerdict]:  # fmt: skip
    """A verdict per ``(prediction, gold)`` pair, with the reason of each ``unverifiable`` one (no
    prediction, a gold that is not text, unreadable, timed out); one bad pair never sinks the batch.

    >>> [(v.status, v.detail) for v in grade_verdicts([("18.0", "18"), ("17", 18)])]
    [('correct', ''), ('unverifiable', 'gold answer is int, not text: store gold answers as strings')]
    """
    results: list[StepVerdict | None] = [_fast(pair) for pair in pairs]
    slow = [i for i, verdict in enumerate(results) if verdict is None]
    if slow:
        from verifiers.pool import get_pool

        graded = get_pool().run("grade", [pairs[i] for i in slow], timeout_s)
        for i, verdict in zip(slow, graded, strict=True):
            results[i] = verdict
    return [v if v is not None else StepVerdict.unverifiable("not graded") for v in results]


def grade_answers(pairs: Sequence[tuple[str | None, str]],
                  timeout_s: float = DEFAULT_GRADE_TIMEOUT_S) -> list[bool | None]:  # fmt: skip
    """:func:`grade_answer` over a batch; the non-trivial pairs share the worker pool. None marks a pair
    that could not be graded (:func:`grade_verdicts` says why).

    >>> grade_answers([("1,234", "1234"), ("18.0", "18"), ("17", "18"), (None, "3"), ("3", 3)])
    [True, True, False, None, None]
    """
    return [None if v.status == "unverifiable" else v.is_correct for v in grade_verdicts(pairs, timeout_s)]


def grade_answer(prediction: str | None, gold: str, timeout_s: float = DEFAULT_GRADE_TIMEOUT_S) -> bool | None:
    """Whether ``prediction`` equals ``gold`` mathematically; None when either cannot be parsed or
    grading ran past ``timeout_s`` seconds. Never raises on model text.

    >>> grade_answer("14/3", r"\\frac{14}{3}")
    True
    >>> grade_answer(r"\\boxed{(3, \\frac{\\pi}{2})}", r"\\left( 3, \\frac{\\pi}{2} \\right)")
    True
    >>> grade_answer("19", "18")
    False
    """
    return grade_answers([(prediction, gold)], timeout_s)[0]
