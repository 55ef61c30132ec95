"""Final-answer extraction shared by every stage: ``Answer: X``, ``\\boxed{X}``, ``#### X``."""

from __future__ import annotations

import re

# Model text is hostile: bound how much of it the regexes scan. Final answers sit at the end.
MAX_SCAN_CHARS = 20_000

_ANSWER_LINE = re.compile(r"(?im)^[ \t>*_]*(?:the\s+)?(?:final\s+)?answer\s*(?:is)?\s*[:=]\s*(.+?)\s*$")
_HASHES = re.compile(r"(?m)^\s*####\s*(.+?)\s*$")
_BOXED = re.compile(r"\\(?:boxed|fbox)\s*\{")


def _last_boxed(text: str) -> str | None:
    """Content of the last ``\\boxed{...}``, with nested braces balanced."""
    starts = [m.end() for m in _BOXED.finditer(text)]
    for start in reversed(starts):
        depth = 1
        for i in range(start, len(text)):
            if text[i] == "{":
                depth += 1
            elif text[i] == "}":
                depth -= 1
                if depth == 0:
                    return text[start:i].strip()
    return None


def _clean(answer: str) -> str | None:
    answer = answer.strip().rstrip(".").strip()
    if answer.startswith("$") and answer.endswith("$") and len(answer) > 1:
        answer = answer.strip("$").strip()
    return answer or None


def extract_answer(text: str | None) -> str | None:
    """The final answer stated in ``text``, or None when it states none.

    Priority: ``\\boxed{}`` (MATH), then ``#### X`` (GSM8K), then the last ``Answer: X`` line.

    >>> extract_answer("3*2=6\\n12+6=18\\nAnswer: 18")
    '18'
    >>> extract_answer("so the total is 72.\\n#### 72")
    '72'
    >>> extract_answer(r"Thus $\\boxed{\\frac{14}{3}}$.")
    '\\\\frac{14}{3}'
    >>> extract_answer("no answer here") is None
    True
    """
    if not text:
        return None
    tail = text[-MAX_SCAN_CHARS:]
    boxed = _last_boxed(tail)
    if boxed is not None:
        return _clean(boxed)
    hashes = _HASHES.findall(tail)
    if hashes:
        return _clean(hashes[-1].replace(",", ""))
    lines = _ANSWER_LINE.findall(tail)
    if lines:
        return _clean(lines[-1])
    return None
