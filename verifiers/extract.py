"""Final-answer extraction shared by every stage: ``Answer: X``, ``\\boxed{X}``, ``#### X``."""

from __future__ import annotations

import re

from verifiers.constants import MAX_SCAN_CHARS

__all__ = ["MAX_SCAN_CHARS", "extract_answer"]

# Each pattern is anchored at a line start and never has two adjacent ``\s*`` that can trade the same
# characters, and the answer is captured greedily to the line's end (trailing space stripped in Python):
# every line start costs time linear in what follows it up to the next non-space, so a scan is linear.
# (The lazy ``(.+?)\s*$`` and a ``^\s*`` that crosses newlines were quadratic on runs of spaces/newlines.)
_ANSWER_LINE = re.compile(r"(?im)^[ \t>*_]*(?:the\s+)?(?:final\s+)?answer(?:\s*is)?\s*[:=]\s*(\S.*)$")
# Markdown emphasis around an answer ("**Answer:** 7", "Answer: **7**") is not part of it.
_EMPHASIS = " \t\r*_"
_HASHES = re.compile(r"(?m)^[^\S\n]*####\s*(\S.*)$")
_BOXED = re.compile(r"\\(?:boxed|fbox)\s*\{")


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


def extract_answer(text: str | None) -> str | None:
    """The final answer stated in ``text``, or None when it states none.

    Priority: ``\\boxed{}`` (MATH), then ``#### X`` (GSM8K), then the last ``Answer: X`` line. Only the last
    :data:`~verifiers.constants.MAX_SCAN_CHARS` characters are read (final answers sit at the end), and the
    scan is linear in them, so this is safe to call in-process on any text.

    >>> extract_answer("3*2=6\\n12+6=18\\nAnswer: 18")
    '18'
    >>> extract_answer("so the total is 72.\\n#### 72")
    '72'
    >>> extract_answer(r"Thus $\\boxed{\\frac{14}{3}}$.")
    '\\\\frac{14}{3}'
    >>> extract_answer("no answer here") is None
    True
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
    lines = _ANSWER_LINE.findall(tail)
    if lines:
        return _clean(lines[-1].strip(_EMPHASIS))
    return None
