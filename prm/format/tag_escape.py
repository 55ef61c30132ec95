"""The escape rule for a step tag inside step text, so that a literal tag never reads as one more step.

Text layouts that end every step with a tag (Math-Shepherd's ``ки``, Qwen2.5-Math-PRM's ``<extra_0>``) break
when a step holds the tag itself: ``киев`` (Kyiv) contains ``ки``, so every reader that cuts at the tag (TRL's
``examples/datasets/math_shepherd.py``, the Math-Shepherd PRM's scorer) sees an extra step and each later label
shifts by one; a literal ``<extra_0>`` becomes one more special tag token.

The rule, applied to the problem and to each step before the tags are added:

1. every WORD JOINER (U+2060, :data:`ESCAPE`) already in the text is doubled;
2. one WORD JOINER is put after the first character of every occurrence of the tag (``ки`` -> ``к\\u2060и``).

The escaped text holds no tag, and reads the same to a person: the joiner is invisible and joins nothing in
math text. :func:`unescape_tag` undoes it exactly (a doubled joiner becomes one, a single one is dropped), so
``unescape_tag(escape_tag(s, tag)) == s`` for every string ``s``. A reader of a file this project did not
write drops each single WORD JOINER, which such text does not hold in practice.
"""

from __future__ import annotations

import re

ESCAPE = "\u2060"  # WORD JOINER: invisible, no meaning in math text, and no step tag contains it
_UNESCAPE = re.compile(f"{ESCAPE}({ESCAPE}?)")


def escape_tag(text: str, tag: str) -> str:
    """``text`` with no occurrence of ``tag`` left, by the rule in the module docstring.

    >>> escape_tag("киев", "ки")
    'к\\u2060иев'
    >>> escape_tag("a <extra_0> b", "<extra_0>")
    'a <\\u2060extra_0> b'
    """
    if len(tag) < 2 or ESCAPE in tag:
        raise ValueError(f"step tag {tag!r} cannot be escaped: the rule puts U+2060 inside the tag, so the tag needs "
                         "at least two characters and none of them U+2060")
    text = text.replace(ESCAPE, ESCAPE * 2)
    marked = f"{tag[0]}{ESCAPE}{tag[1:]}"
    while tag in text:  # only a tag that overlaps itself ("aa" in "aaa") can reappear after one pass
        text = text.replace(tag, marked)
    return text


def unescape_tag(text: str) -> str:
    """Undo :func:`escape_tag` (for any tag): a doubled U+2060 becomes one, a single one is dropped.

    >>> unescape_tag(escape_tag("ки \\u2060ки", "ки")) == "ки \\u2060ки"
    True
    """
    return _UNESCAPE.sub(r"\1", text)
