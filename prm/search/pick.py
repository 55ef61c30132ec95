"""The one rule every PRM-picking method uses to choose its answer among finished candidates."""

from __future__ import annotations

from collections.abc import Sequence

from prm.search.scoring import rank_key
from prm.search.types import Beam


def pick_best(candidates: Sequence[Beam], how: str) -> Beam:
    """The candidate that states an answer with the highest ``rank_key(scores, how)``; the first of equals.

    Candidates without an answer (cut by a token or step limit) are picked only when no candidate has one.

    >>> a, b = Beam("x\\nAnswer: 1", ("x",), (0.9,)), Beam("y\\nAnswer: 2", ("y",), (0.95,))
    >>> pick_best([a, b], "last").answer, pick_best([a, Beam("z", ("z",), (1.0,))], "last").answer
    ('2', '1')
    """
    if not candidates:
        raise ValueError("no candidates to pick from; the search generated nothing for this problem")
    keys = [(c.answer is not None, rank_key(c.scores, how)) for c in candidates]
    return candidates[keys.index(max(keys))]
