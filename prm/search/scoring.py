"""PRM scores for search: the batched scorer, with defined results for what it cannot score.

* A candidate the PRM cannot fit in its context gets NaN for every step and ``overflow=True``: the search
  stops growing it (a longer prefix cannot fit either), and it ranks last.
* NaN scores (from overflow, or from a PRM that returns them) rank below every finite score, so a search
  never prefers a candidate it could not read; a candidate with no step ranks last too.

PRM tokens (what scoring cost): the tokens each candidate ran through the PRM. A PRM on transformers is wrapped in
:class:`prm.scoring.IncrementalScorer` (:func:`prefix_scorer`), which scores a new step from its parent's cached
keys/values and says what each item ran; any other PRM reads the whole candidate, its encoded length. A token
counts once although an LM-head PRM runs it through two models.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

from prm.best_of_n import aggregate
from prm.format import ContextOverflowError
from prm.scoring import ImplicitPRMScorer, IncrementalScorer, Scorer


class Scored(NamedTuple):
    """What :func:`score_candidates` returns, one entry per item."""

    scores: list[list[float]]  # P(good) per step (NaN for every step of an overflowing item)
    overflow: list[bool]  # whether the item overflowed the PRM's context
    prm_tokens: list[int]  # tokens the item ran through the PRM


def prefix_scorer(scorer: Scorer) -> Scorer:
    """``scorer`` scoring new steps from their parent's cached keys/values where it can (a PRM on transformers:
    an LM-head PRM, or a token-classification or two-token head, whose models attend to every earlier token);
    else ``scorer`` itself (vLLM, custom head code, a sliding window, a test's table). Scores are the same."""
    if isinstance(scorer, ImplicitPRMScorer) or getattr(scorer, "engine", None) == "transformers":
        try:
            return IncrementalScorer(scorer)
        except ValueError:  # it cannot extend a cache (IncrementalScorer says why): rescored in full
            return scorer
    return scorer


def release(scorer: Scorer, live: Sequence[tuple[str, Sequence[str]]] | None = None) -> None:
    """Free the prefix cache of ``scorer`` (:func:`prefix_scorer`) but what the ``live`` candidates extend (None:
    everything); nothing for a scorer without one."""
    if isinstance(scorer, IncrementalScorer) and live is not None:
        scorer.keep(live)
    elif isinstance(scorer, IncrementalScorer):
        scorer.forget()


def score_candidates(scorer: Scorer, items: Sequence[tuple[str, Sequence[str]]]) -> Scored:
    """P(good) per step of every ``(question, steps)``, whether each overflowed the PRM's context, and the tokens
    each ran through the PRM.

    One :meth:`score_batch` call; when an item overflows, the others are scored one by one so that only the
    overflowing items get NaN.
    """
    if not items:
        return Scored([], [], [])
    try:
        scores = [list(s) for s in scorer.score_batch(list(items))]
        return Scored(scores, [False] * len(items), _tokens(scorer, items, [False] * len(items)))
    except ContextOverflowError:
        pass
    scores, overflow, tokens = [], [], []
    for question, steps in items:
        try:
            scores.append(list(scorer.score_steps(question, list(steps))))
            overflow.append(False)
            tokens += _tokens(scorer, [(question, steps)], [False])
        except ContextOverflowError:
            scores.append([math.nan] * len(steps))
            overflow.append(True)
            tokens.append(0)
    return Scored(scores, overflow, tokens)


def _tokens(scorer: Scorer, items: Sequence[tuple[str, Sequence[str]]], overflow: Sequence[bool]) -> list[int]:
    """Tokens each item of the scorer's last call ran: its own count where it keeps one, else the item's encoded
    length (a scorer with no ``encode``, such as a test's table, counts 0)."""
    if isinstance(scorer, IncrementalScorer):
        return list(scorer.last_tokens)
    encode = getattr(scorer, "encode", None)
    if encode is None:
        return [0] * len(items)
    return [len(encode(q, list(steps)).input_ids) if steps and not over else 0
            for (q, steps), over in zip(items, overflow, strict=True)]


def rank_key(scores: Sequence[float], how: str) -> float:
    """The aggregated score a search ranks by; ``-inf`` for no steps or any NaN score.

    >>> rank_key([0.9, 0.4], "last"), rank_key([], "last"), rank_key([0.9, float("nan")], "min")
    (0.4, -inf, -inf)
    """
    if not scores or any(math.isnan(x) for x in scores):
        return -math.inf
    return aggregate(scores, how)
