"""PRM scores for search: the batched scorer, with defined results for what it cannot score.

* A candidate the PRM cannot fit in its context gets NaN for every step and ``overflow=True``: the search
  stops growing it (a longer prefix cannot fit either), and it ranks last.
* NaN scores (from overflow, or from a PRM that returns them) rank below every finite score, so a search
  never prefers a candidate it could not read; a candidate with no step ranks last too.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from prm.evaluation.prm_eval import aggregate
from prm.format import ContextOverflowError


def score_candidates(scorer: Any, items: Sequence[tuple[str, Sequence[str]]]) -> tuple[list[list[float]], list[bool]]:
    """(P(good) per step of every ``(question, steps)``, whether each overflowed the PRM's context).

    One :meth:`score_batch` call; when an item overflows, the others are scored one by one so that only the
    overflowing items get NaN.
    """
    if not items:
        return [], []
    try:
        return [list(s) for s in scorer.score_batch(list(items))], [False] * len(items)
    except ContextOverflowError:
        pass
    scores, overflow = [], []
    for question, steps in items:
        try:
            scores.append(list(scorer.score_steps(question, list(steps))))
            overflow.append(False)
        except ContextOverflowError:
            scores.append([math.nan] * len(steps))
            overflow.append(True)
    return scores, overflow


def rank_key(scores: Sequence[float], how: str) -> float:
    """The aggregated score a search ranks by; ``-inf`` for no steps or any NaN score.

    >>> rank_key([0.9, 0.4], "last"), rank_key([], "last"), rank_key([0.9, float("nan")], "min")
    (0.4, -inf, -inf)
    """
    if not scores or any(math.isnan(x) for x in scores):
        return -math.inf
    return aggregate(scores, how)
