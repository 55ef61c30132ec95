"""A griffe extension for the API pages: fences each docstring's doctest examples as ``pycon`` code.

The project's docstrings carry ``>>>`` examples that pytest runs; left bare, Markdown reads their output
(``[0.75, 0.25]``, ``['a', 'b']``) as reference links and the strict build fails on them.
"""

from __future__ import annotations

from typing import Any

import griffe


def fence_doctests(text: str) -> str:
    """Wrap each run of ``>>>`` lines and their output in a ``pycon`` fence; other text is unchanged.

    >>> fence_doctests("Adds.\\n\\n>>> f([1])\\n[2]\\n\\nMore.").splitlines()
    ['Adds.', '', '```pycon', '>>> f([1])', '[2]', '```', '', 'More.']
    """
    out: list[str] = []
    in_block = False
    for line in text.split("\n"):
        stripped = line.strip()
        if not in_block and stripped.startswith(">>>"):
            out.append("```pycon")
            in_block = True
        elif in_block and not stripped:
            out.append("```")
            in_block = False
        out.append(line.strip() if in_block else line)
    if in_block:
        out.append("```")
    return "\n".join(out)


class FenceDoctests(griffe.Extension):
    """Fences the doctests of every object griffe loads."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = fence_doctests(obj.docstring.value)
