"""Per-step PRM rewards of a completion, with each step's character span in the completion.

Steps come from :func:`prm.format.segment` (the one owner of step boundaries) and scores from the PRM's
``score_batch``; the spans index the completion exactly as the caller passed it, so a framework can put each
step's score on its own tokens (e.g. at the token holding the span's last character).

Two cases get a defined result instead of an error:

* padding: special-token texts (``<pad>``, ``<|im_end|>``, ... see ``RewardConfig.pad_texts``) and
  whitespace at either end are cut off before segmenting, so they are never a step;
* a completion too long for the PRM's context: the longest prefix of steps that fits is scored and every
  later step gets :data:`~prm.rewards.constants.NO_STEP_SCORE` (``unread`` counts them): steps the PRM cannot
  read earn no credit, so writing past its context never pays.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from prm.format import ContextOverflowError, segment
from prm.rewards.constants import NO_STEP_SCORE, PAD_TEXTS
from prm.scoring import Scorer, assess_batch

Span = tuple[int, int]


@dataclass(frozen=True)
class StepRewards:
    """P(good) of every step of one completion, the step texts and their ``[start, end)`` spans in it."""

    scores: list[float]
    spans: list[Span]
    steps: list[str]
    unread: int = 0  # trailing steps past the PRM's context, scored NO_STEP_SCORE
    # Per scored step: far from what the PRM was trained on (prm.scoring.implicit_scorer.off_policy); None where the
    # PRM has no such rule. Empty when nothing was scored.
    off_policy: tuple[bool | None, ...] = ()

    @property
    def scored(self) -> bool:
        """Whether every step has a score; False when the PRM did not score the completion at all (a reward
        server's limit, a scoring error), which then has its steps and spans but no scores.

        >>> StepRewards([], [(0, 3)], ["1+1"]).scored, StepRewards([], [], []).scored
        (False, True)
        """
        return len(self.scores) == len(self.spans)


def strip_padding(text: str, pad_texts: Sequence[str] = PAD_TEXTS) -> Span:
    """The ``[start, end)`` window of ``text`` left after cutting pad texts and whitespace off both ends.

    Linear in ``text``: one regex match over each end (the trailing one on the reversed text), so a megabyte
    of ``<pad>`` costs milliseconds; cutting one pad at a time and re-slicing took seconds.

    >>> text = "<pad>1+1 = 2\\nAnswer: 2<|im_end|>\\n<pad><pad>"
    >>> start, end = strip_padding(text)
    >>> text[start:end]
    '1+1 = 2\\nAnswer: 2'
    """
    leading, trailing = _padding_patterns(tuple(pad_texts))
    tail = trailing.match(text[::-1])
    end = len(text) - (tail.end() if tail else 0)
    head = leading.match(text, 0, end)
    return (head.end() if head else 0), end


@functools.lru_cache(maxsize=16)
def _padding_patterns(pad_texts: tuple[str, ...]) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """A run of whitespace and pad texts at the start of a text, and the same for the reversed text; longest pad
    first, so ``</s>`` is not read as ``<s>``'s tail. Possessive, so nothing is given back (no backtracking),
    and each alternative is itself a run (``(?:<pad>)++``): a megabyte of one pad is matched in ~5 ms, not the
    ~28 ms of trying every pad at every position."""
    pads = sorted({p for p in pad_texts if p}, key=len, reverse=True)

    def run(texts: list[str]) -> re.Pattern[str]:
        # ``++``, not ``*+``: a pattern that matches the empty string matches at every position of a text.
        return re.compile("(?:" + "|".join([*(f"(?:{re.escape(t)})++" for t in texts), r"\s++"]) + ")++")

    return run(pads), run([p[::-1] for p in pads])


def _segment(completion: str, pad_texts: Sequence[str]) -> tuple[list[str], list[Span]]:
    start, end = strip_padding(completion, pad_texts)
    seg = segment(completion[start:end])
    return list(seg.steps), [(s + start, e + start) for s, e in seg.spans]


def fitting_prefix(scorer: Scorer, problem: str, steps: Sequence[str]) -> int:
    """How many leading steps fit the PRM's context (``scorer.encode`` raises ContextOverflowError past it).

    Prefixes of 1, 2, 4, ... steps are encoded until one overflows, then the longest that fits is binary-searched
    between the last that fit and it. The text encoded grows with what fits, not with what was sent: steps a
    megabyte past the context cost a few encodes of about a context's worth of text, not ``log2(n)`` encodes
    of the megabyte.

    >>> class Holds3:  # stands in for a PRMScorer whose context holds three steps
    ...     def encode(self, problem, steps):
    ...         if len(steps) > 3:
    ...             raise ContextOverflowError(f"{len(steps)} steps")
    >>> fitting_prefix(Holds3(), "q", ["1+1 = 2"] * 1000), fitting_prefix(Holds3(), "q", ["1+1 = 2"] * 2)
    (3, 2)
    """
    fits, size = 0, 1  # invariant: steps[:fits] fits
    while fits < len(steps):
        size = min(size, len(steps))
        try:
            scorer.encode(problem, steps[:size])
        except ContextOverflowError:
            break
        fits, size = size, 2 * size
    else:
        return fits
    lo, hi = fits, size - 1  # steps[:lo] fits, steps[:hi + 1] does not
    while lo < hi:
        mid = (lo + hi + 1) // 2
        try:
            scorer.encode(problem, steps[:mid])
            lo = mid
        except ContextOverflowError:
            hi = mid - 1
    return lo


def step_rewards_batch(scorer: Scorer, items: Sequence[tuple[str, str]], pad_texts: Sequence[str] = PAD_TEXTS,
                       batch_size: int | None = None) -> list[StepRewards]:
    """:func:`step_rewards` of many ``(prompt, completion)`` pairs, scored in padded batches.

    ``scorer`` is a :class:`prm.scoring.PRMScorer` (or anything with its ``score_batch``; ``encode`` is used
    only when a completion overflows the context).

    >>> class Half:  # stands in for a PRMScorer: every step scores 0.5
    ...     def score_batch(self, items, batch_size=None):
    ...         return [[0.5] * len(steps) for _, steps in items]
    >>> [r.scores for r in step_rewards_batch(Half(), [("q", "1+1 = 2\\nAnswer: 2"), ("q", "<pad>")])]
    [[0.5], []]
    """
    segmented = [_segment(completion, pad_texts) for _, completion in items]
    problems = [problem for problem, _ in items]
    to_score = [(p, steps) for p, (steps, _) in zip(problems, segmented, strict=True)]
    unread = [0] * len(items)
    try:
        assessed = assess_batch(scorer, to_score, batch_size=batch_size)
    except ContextOverflowError:
        for i, (problem, steps) in enumerate(to_score):
            fits = fitting_prefix(scorer, problem, steps)
            unread[i] = len(steps) - fits
            to_score[i] = (problem, steps[:fits])
        assessed = assess_batch(scorer, to_score, batch_size=batch_size)
    return [StepRewards([a.score for a in row] + [NO_STEP_SCORE] * n_unread, spans, steps, n_unread,
                        tuple(a.off_policy for a in row) + (None,) * n_unread if row or n_unread else ())
            for row, (steps, spans), n_unread in zip(assessed, segmented, unread, strict=True)]


def step_rewards(scorer: Scorer, prompt: str, completion: str, pad_texts: Sequence[str] = PAD_TEXTS) -> StepRewards:
    """P(good) of each step of ``completion`` answering ``prompt`` (the problem text the PRM is conditioned
    on), with the steps' spans in ``completion``; empty lists when it has no steps.

    >>> class Half:
    ...     def score_batch(self, items, batch_size=None):
    ...         return [[0.5] * len(steps) for _, steps in items]
    >>> r = step_rewards(Half(), "1+1", "<s>1+1 = 2\\n2*3 = 6\\nAnswer: 6</s>")
    >>> r.scores, r.spans, r.steps
    ([0.5, 0.5], [(3, 10), (11, 18)], ['1+1 = 2', '2*3 = 6'])
    """
    return step_rewards_batch(scorer, [(prompt, completion)], pad_texts, batch_size=1)[0]
