"""Where a flywheel round lives in the warehouse: one source per round, under one fixed day."""

from __future__ import annotations

import re

ROUND_PREFIX = "flywheel-r"
# Rounds are numbered, not dated: every table holds a round's rows in one (source, day) partition under this
# fixed day, so re-materializing a round replaces them in place whatever the date (created_at says when).
ROUND_DAY = "2026-11-01"
# ``\Z``, not ``$`` (which accepts "flywheel-r1\n"); ASCII digits, at most 9 (``\d`` takes other scripts' digits,
# and a million digits would stop ``int``); ``round_source`` must give the source back, so "flywheel-r01" is none.
_ROUND = re.compile(rf"\A{ROUND_PREFIX}([0-9]{{1,9}}+)\Z")


def round_source(k: int) -> str:
    """The warehouse ``source`` of round ``k``.

    >>> round_source(2)
    'flywheel-r2'
    """
    if not isinstance(k, int) or isinstance(k, bool) or k < 0:
        raise ValueError(f"round {k!r} must be an integer >= 0")
    return f"{ROUND_PREFIX}{k}"


def round_of(source: str) -> int | None:
    """The round a warehouse ``source`` holds, None for any other source.

    >>> round_of("flywheel-r12"), round_of("arith"), round_of("flywheel-r1\\n"), round_of("flywheel-r01")
    (12, None, None, None)
    """
    match = _ROUND.match(source) if isinstance(source, str) else None
    if match is None or round_source(int(match.group(1))) != source:
        return None
    return int(match.group(1))


def window_rounds(k: int, window: int | None) -> list[int]:
    """The rounds whose labels train round ``k``'s PRM: all so far (None), or the last ``window``.

    >>> window_rounds(3, None), window_rounds(3, 2), window_rounds(0, 2)
    ([0, 1, 2, 3], [2, 3], [0])
    """
    if window is not None and window < 1:
        raise ValueError(f"window={window} must be >= 1 (rounds of labels), or None for every round")
    return list(range(0 if window is None else max(0, k - window + 1), k + 1))
