"""Step segmentation shared by generation, labeling and training."""

from __future__ import annotations

import re

from verifiers.extract import extract_answer

DEFAULT_SEPARATOR = "\n"
# A line that only states the final answer is not a reasoning step.
_ANSWER_ONLY = re.compile(r"(?i)^\s*(?:####|(?:final\s+)?answer\s*(?:is)?\s*[:=])")


def split_steps(text: str, separator: str = DEFAULT_SEPARATOR, keep_answer_line: bool = False) -> list[str]:
    r"""Split a solution into steps: one per non-empty segment between separators.

    ``separator="\n\n"`` gives one step per paragraph (GSM8K/MATH style). The final
    ``Answer: X`` / ``#### X`` line is dropped unless ``keep_answer_line``.

    >>> split_steps("12+7-3*2 = 12+7-6\n12+7-6 = 19-6\n\n19-6 = 13\nAnswer: 13")
    ['12+7-3*2 = 12+7-6', '12+7-6 = 19-6', '19-6 = 13']
    >>> split_steps("First.\n\nSecond\nline.", separator="\n\n")
    ['First.', 'Second\nline.']
    """
    if not separator:
        raise ValueError("separator must be a non-empty string, e.g. '\\n' (one step per line)")
    parts = [p.strip() for p in text.split(separator)]
    steps = [p for p in parts if p]
    if not keep_answer_line:
        steps = [s for s in steps if not _ANSWER_ONLY.match(s)]
    return steps


def join_steps(steps: list[str], separator: str = DEFAULT_SEPARATOR) -> str:
    """Inverse of :func:`split_steps` for a prefix of steps (used to build rollout prompts)."""
    return separator.join(steps)


def final_answer(text: str) -> str | None:
    """The final answer of a solution text (see :func:`verifiers.extract_answer`)."""
    return extract_answer(text)
