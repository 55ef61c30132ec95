"""Step segmentation with character spans: the one place where step boundaries are decided.

A completion (the text a model wrote after its prompt) is cut into steps; each step is a span
``[start, end)`` of the completion, so ``completion[start:end]`` *is* the step. The rule:

* steps are **paragraphs** (separated by a blank line) when the completion contains a blank line
  (MATH-style solutions), else **lines** (GSM8K, the policy, the generated tasks);
* a step's span excludes the whitespace around it (``\\r`` of ``\\r\\n`` endings included);
* a line or paragraph that only states the final answer (``Answer: 13``, ``#### 13``, ``The answer is 13.``) is
  not a step: :func:`verifiers.extract.is_answer_line` owns that rule, beside the extractor that reads it;
* past :data:`MAX_PIECES` lines or paragraphs, the rest of the completion is one last step.

Every pattern is linear in the text, so segmentation is safe on hostile model output of any size.

A prefix of ``k + 1`` steps is rendered from the spans as ``completion[:boundary(k)]``: the model's own
characters up to the end of step ``k`` plus the whitespace it wrote after it, never a re-join of step
strings. Rollouts, labelers, the judge, policy data and PRM inputs all go through here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from verifiers import is_answer_line

# The whitespace a step's span excludes (``str.strip``'s set, not regex ``\s``, which also holds Unicode spaces).
_WHITESPACE = " \t\r\n\f\v"
_NON_WS = r"[^ \t\r\n\f\v]"
# A blank line: a newline, optional horizontal whitespace (``\r`` included), another newline.
_BLANK_LINE = re.compile(r"\n[ \t\r\f\v]*\n")
# A step's stripped span: from a non-space character to the last one before the line's end (line mode) or before
# the next blank line (paragraph mode). Both are linear: each character is consumed once, and the only
# backtracking gives back the trailing whitespace of one step.
_LINE_STEP = re.compile(rf"{_NON_WS}(?:[^\n]*{_NON_WS})?")
_PARAGRAPH_STEP = re.compile(rf"{_NON_WS}(?:(?:[^\n]|\n(?![ \t\r\f\v]*+\n))*{_NON_WS})?")
# Lines (or paragraphs) read one by one; whatever follows the last of them is one final step. A real solution
# has tens of steps (a PRM scores at most ~1k), so only hostile text reaches it, and it keeps that text's cost
# linear with a small constant instead of a Python object per one-character line.
MAX_PIECES = 4096

Span = tuple[int, int]


@dataclass(frozen=True)
class Segmented:
    """A completion and the spans of its steps.

    >>> seg = segment("2+3 = 5\\r\\n5*2 = 10  \\nAnswer: 10")
    >>> seg.steps
    ('2+3 = 5', '5*2 = 10')
    >>> seg.prefix(0)
    '2+3 = 5\\r\\n'
    >>> seg.prefix(1) == seg.text[: seg.boundary(1)]
    True
    """

    text: str
    spans: tuple[Span, ...]

    def __len__(self) -> int:
        return len(self.spans)

    @property
    def steps(self) -> tuple[str, ...]:
        """Step texts, each exactly ``text[start:end]``."""
        return tuple(self.text[s:e] for s, e in self.spans)

    def boundary(self, k: int) -> int:
        """Where the prefix of steps ``0..k`` ends: after step ``k`` and the whitespace the model wrote after it.

        ``k = -1`` is the empty prefix (boundary 0).
        """
        if k < 0:
            return 0
        end = self.spans[k][1]
        stop = self.spans[k + 1][0] if k + 1 < len(self.spans) else len(self.text)
        tail = self.text[end:stop]
        return end + len(tail) - len(tail.lstrip(_WHITESPACE))

    def prefix(self, k: int) -> str:
        """The completion up to and including step ``k`` (``""`` for ``k = -1``), exactly as written."""
        return self.text[: self.boundary(k)]

    def then(self, k: int, continuation: str) -> Segmented:
        """Steps ``0..k`` of this completion followed by a continuation sampled from :meth:`prefix` ``(k)``.

        The continuation is segmented on its own and its spans shifted, so the result's steps are the
        first ``k + 1`` steps here plus the continuation's steps.

        >>> segment("1+1 = 2\\n2+2 = 5\\n").then(0, "2+2 = 4\\nAnswer: 4").steps
        ('1+1 = 2', '2+2 = 4')
        """
        head = self.prefix(k)
        tail = segment(continuation)
        spans = (*self.spans[: k + 1], *((s + len(head), e + len(head)) for s, e in tail.spans))
        return Segmented(head + continuation, spans)


def segment(text: str) -> Segmented:
    """Cut ``text`` into steps (see the module docstring for the rule).

    >>> segment("First.\\n\\nSecond\\nline.\\n\\n#### 7").steps
    ('First.', 'Second\\nline.')
    >>> segment("  \\n").steps
    ()
    """
    if not isinstance(text, str):
        raise TypeError(f"segment takes the completion as a str, not {type(text).__name__}")
    pattern = _PARAGRAPH_STEP if _BLANK_LINE.search(text) else _LINE_STEP
    spans: list[Span] = []
    for i, m in enumerate(pattern.finditer(text)):
        if i == MAX_PIECES:  # the rest is one last step: bounded work per completion, and no text dropped
            spans.append((m.start(), len(text.rstrip(_WHITESPACE))))
            break
        if not is_answer_line(text, *m.span()):
            spans.append(m.span())
    return Segmented(text, tuple(spans))


def from_spans(text: str, spans: Sequence[Span]) -> Segmented:
    """Rebuild a segmentation from stored spans (``steps.char_start``/``char_end``), validating them."""
    checked, last = [], 0
    for i, (start, end) in enumerate((int(s), int(e)) for s, e in spans):
        if not last <= start < end <= len(text):
            raise ValueError(f"step {i} span [{start}, {end}) is empty, out of order or outside the completion "
                             f"of {len(text)} characters; spans must come from segment()")
        checked.append((start, end))
        last = end
    return Segmented(text, tuple(checked))


def split_steps(text: str) -> list[str]:
    """Step texts of ``text`` (shorthand for ``list(segment(text).steps)``).

    >>> split_steps("12+7 = 19\\n19-6 = 13\\nAnswer: 13")
    ['12+7 = 19', '19-6 = 13']
    """
    return list(segment(text).steps)


def join_steps(steps: Sequence[str]) -> str:
    """Write step texts as a completion in the canonical layout (one step per line, ``\\n`` after each).

    For text a program writes (gold demonstrations, exports); never to rebuild what a model wrote: use
    :meth:`Segmented.prefix` for that. ``segment(join_steps(steps)).steps == steps`` for one-line steps.

    >>> join_steps(["1+1 = 2", "2+2 = 4"])
    '1+1 = 2\\n2+2 = 4\\n'
    """
    return "".join(f"{s}{STEP_SEPARATOR}" for s in steps)


# The separator a program writes between steps, and the one PRM training and inference append after each
# step (TRL's stepwise-supervision default): the PRM reads its score at this token.
STEP_SEPARATOR = "\n"
