"""Final-answer extraction shared by every stage, and the one rule for a line that only states the answer.

What :func:`extract_answer` reads, in priority order: ``\\boxed{X}`` (MATH), ``#### X`` (GSM8K), the last
answer statement (``Answer: X``, ``The final answer is: X``, ``so the answer is X.``), the last ``$...$`` of the
final line, and only when asked the last number. :func:`is_answer_line` says whether a step only states the
answer; :func:`prm.format.segment` calls it so that an answer line is never scored as a step.
"""

from __future__ import annotations

import re

from verifiers.constants import MAX_SCAN_CHARS

__all__ = ["MAX_SCAN_CHARS", "extract_answer", "is_answer_line"]

# Each pattern is anchored at a line start or at a literal word, never has two adjacent whitespace runs that
# can trade the same characters (the runs are possessive or separated by a required character), and captures
# greedily to the line's end (trimmed in Python): every start costs time linear in what follows it up to the
# next non-space, so a scan is linear. (The lazy ``(.+?)\s*$`` and a ``^\s*`` that crosses newlines were
# quadratic on runs of spaces/newlines.)
_ANSWER_LINE = re.compile(r"(?im)^[ \t>*_]*(?:the\s+)?(?:final\s+)?answer(?:\s*is)?\s*[:=]\s*(\S.*)$")
# "... the answer is 72." / "the final answer is $2$" anywhere in a line, colon optional; the answer stays on
# the line. ``\b`` before "answer" keeps "nanswer" out; "is" must be a word.
_ANSWER_IS = re.compile(r"(?i)\banswer[^\S\n]++is\b[^\S\n]*+[:=]?[^\S\n]*+(\S[^\n]*)")
# Markdown emphasis around an answer ("**Answer:** 7", "Answer: **7**") is not part of it.
_EMPHASIS = " \t\r*_"
_HASHES = re.compile(r"(?m)^[^\S\n]*####\s*(\S.*)$")
_BOXED = re.compile(r"\\(?:boxed|fbox)\s*\{")
# Where a sentence-style answer ends: a sentence stop followed by a space or the end ("72. I hope"), or a
# clause that explains it ("72 because ..."); a decimal point ("3.5") is no stop.
_SENTENCE_END = re.compile(r"[.;!?](?=\s|$)|\s(?:because|since|which|as)\s")
# A math span ``$...$`` (or ``$$...$$``) without dollars inside: each ``$`` starts at most one scan to the next.
_MATH_SPAN = re.compile(r"\$\$?([^$]+)\$")
_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")
# A sentence answer with a digit or a math character, or of a few words ("yes", "18 dollars"); longer plain
# prose after "the answer is" ("the answer is found by adding ...") is no answer.
_MATH_CHARS = re.compile(r"[\d\\^{}()/+=<>-]")
_MAX_PLAIN_WORDS = 3
# A step that only states the final answer: optional emphasis or quote marks, an optional connective
# ("So,", "Therefore"), then "[the] [final] answer" with ":"/"=" or "is", or a "####" line. Read on a step's first
# ANSWER_PREFIX_CHARS characters only, so it costs constant time per step; anchored at the text's start.
_ANSWER_ONLY = re.compile(r"(?i)\A[ \t>*_]*+(?:####|(?:(?:so|thus|therefore|hence)\b[, \t]*+)?(?:the\s++)?"
                          r"(?:final\s++)?answer(?:\s*+[:=]|\s++is\b))")
ANSWER_PREFIX_CHARS = 64


def _last_boxed(text: str) -> str | None:
    """Content of the last ``\\boxed{...}`` whose brace is closed, nested braces balanced: one pass that
    matches every brace with a stack (scanning from each ``\\boxed{`` was quadratic in unclosed ones)."""
    starts = {m.end() for m in _BOXED.finditer(text)}  # index just after each boxed "{"
    if not starts:
        return None
    opened: list[int] = []
    last: tuple[int, int] | None = None
    for i, ch in enumerate(text):
        if ch == "{":
            opened.append(i + 1)
        elif ch == "}" and opened:
            start = opened.pop()
            if start in starts and (last is None or start > last[0]):
                last = (start, i)
    return None if last is None else text[last[0] : last[1]].strip()


def _clean(answer: str) -> str | None:
    answer = answer.strip().rstrip(".").strip()
    if answer.startswith("$") and answer.endswith("$") and len(answer) > 1:
        answer = answer.strip("$").strip()
    return answer or None


def _sentence_answer(rest: str) -> str | None:
    """The answer in what follows "the answer is": its leading ``$...$`` span, else the text up to the end of
    the sentence, without emphasis."""
    rest = rest.strip(_EMPHASIS)
    if rest.startswith("$"):
        span = _MATH_SPAN.match(rest)
        if span:
            return _clean(span.group(1))
    stop = _SENTENCE_END.search(rest)
    answer = _clean((rest[: stop.start()] if stop else rest).strip(_EMPHASIS))
    if answer is None or _MATH_CHARS.search(answer) or len(answer.split()) <= _MAX_PLAIN_WORDS:
        return answer
    return None


def _last_statement(tail: str) -> str | None:
    """The last answer statement of ``tail``: an ``Answer: X`` line or an "answer is X" sentence, whichever
    comes later."""
    line = statement = None
    for line in _ANSWER_LINE.finditer(tail):  # noqa: B007 (the last match is the one kept)
        pass
    for statement in _ANSWER_IS.finditer(tail):  # noqa: B007
        pass
    if line is not None and (statement is None or line.start(1) >= statement.start(1)):
        return _clean(line.group(1).strip(_EMPHASIS))
    return None if statement is None else _sentence_answer(statement.group(1))


def _last_math_span(tail: str) -> str | None:
    """The last ``$...$`` span of the last non-blank line ("Thus the area is $12\\pi$.")."""
    last_line = tail.rstrip().rpartition("\n")[2]
    span = None
    for span in _MATH_SPAN.finditer(last_line):  # noqa: B007
        pass
    return None if span is None else _clean(span.group(1))


def _last_number(tail: str) -> str | None:
    number = None
    for number in _NUMBER.finditer(tail):  # noqa: B007
        pass
    return None if number is None else number.group(0).replace(",", "")


def extract_answer(text: str | None, *, last_number: bool = False) -> str | None:
    """The final answer stated in ``text``, or None when it states none.

    Priority: ``\\boxed{}`` (MATH), then ``#### X`` (GSM8K), then the last answer statement (``Answer: X`` line
    or "the answer is X" sentence), then the last ``$...$`` of the final line, then, only with
    ``last_number=True``, the last number anywhere (a lenient reading: it credits any text that ends on the
    right number). Only the last :data:`~verifiers.constants.MAX_SCAN_CHARS` characters are read (final answers
    sit at the end), and the scan is linear in them, so this is safe to call in-process on any text.

    >>> extract_answer("3*2=6\\n12+6=18\\nAnswer: 18")
    '18'
    >>> extract_answer("so the total is 72.\\n#### 72")
    '72'
    >>> extract_answer(r"Thus $\\boxed{\\frac{14}{3}}$.")
    '\\\\frac{14}{3}'
    >>> extract_answer("So the answer is 18 dollars. I hope it helps.")
    '18 dollars'
    >>> extract_answer("Adding them, the sum is $2$.")
    '2'
    >>> extract_answer("no answer here") is None
    True
    >>> extract_answer("She has 3 + 4 = 7 apples", last_number=True)
    '7'
    """
    if text is not None and not isinstance(text, str):
        raise TypeError(f"extract_answer takes the model's text as a str (or None), not {type(text).__name__}; "
                        "decode bytes or join lists first")
    if not text:
        return None
    tail = text[-MAX_SCAN_CHARS:]
    boxed = _last_boxed(tail)
    if boxed is not None:
        return _clean(boxed)
    hashes = _HASHES.findall(tail)
    if hashes:
        return _clean(hashes[-1].rstrip().replace(",", ""))
    answer = _last_statement(tail) or _last_math_span(tail)
    if answer is None and last_number:
        answer = _last_number(tail)
    return answer


def is_answer_line(text: str, start: int = 0, end: int | None = None) -> bool:
    """Whether ``text[start:end]`` (one step) only states the final answer, so it is not a reasoning step:
    ``Answer: 13``, ``#### 13``, ``The answer is 72.``, ``So the final answer is: $2$``. Reads at most
    :data:`ANSWER_PREFIX_CHARS` characters from ``start``.

    >>> [is_answer_line(s) for s in ("The answer is: 72", "The answer is 72.", "#### 7", "6*3 = 18")]
    [True, True, True, False]
    >>> is_answer_line("Answer the question: 2+2 = 4")
    False
    """
    stop = len(text) if end is None else end
    # A slice, not match(text, start, ...): the pattern is anchored at ``\A`` (so a search over any text tries one
    # position, not every one), which only a slice moves to the step's start.
    return bool(_ANSWER_ONLY.match(text[start:min(stop, start + ANSWER_PREFIX_CHARS)]))
