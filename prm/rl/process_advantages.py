"""DeepSeekMath's process-supervised GRPO advantages (Shao et al. 2024, sec. 4.1.3), as pure functions.

For one group (the completions of one prompt), every step reward is normalised over all steps of the group's
completions, ``r~ = (r - mean) / std``; a token's process advantage is the sum of the normalised rewards of
the steps that end at or after it. Tokens after the last step's end (the answer line, EOS) get 0 from the
process part. Step spans come from :func:`prm.format.segment` through :class:`prm.rewards.steps.StepRewards`;
here they are mapped to the tokens the policy generated.

Defined results for bad input (never an exception on model text):

* a completion with no step: process advantage 0 on every token (only the outcome part, if mixed, remains);
* a NaN score, or a step with no score (the PRM did not score the completion): the step is left out of the
  group's statistics and its normalised reward is 0, so it moves no token's advantage;
* a step past the PRM's context already has :data:`~prm.rewards.constants.NO_STEP_SCORE` from
  :mod:`prm.rewards.steps` (steps the PRM cannot read earn the lowest score) and is normalised like any other;
* ties (every step of the group scored alike, or a group with one step): std 0, every normalised reward 0.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from typing import Any

Span = tuple[int, int]

# A group whose step scores spread less than this is a tie: dividing float rounding noise (the mean of three
# 0.7s is 0.7000000000000001) by a ~1e-16 std would turn equal scores into advantages of +-1. PRM scores are
# probabilities in [0, 1], so 1e-6 is far below any difference a PRM means.
TIE_STD = 1e-6


def normalise_group(scores: Sequence[Sequence[float]]) -> list[list[float]]:
    """Each step score of a group minus the mean over all the group's finite step scores, divided by their
    (population) std; 0 where the score is NaN or where the std is below :data:`TIE_STD` (ties, a single step).

    >>> normalise_group([[1.0, 0.0], [0.5], []])
    [[1.224744871391589, -1.224744871391589], [0.0], []]
    >>> normalise_group([[0.7, float("nan")], [0.7]])
    [[0.0, 0.0], [0.0]]
    """
    finite = [float(s) for row in scores for s in row if math.isfinite(s)]
    if not finite:
        return [[0.0] * len(row) for row in scores]
    mean = sum(finite) / len(finite)
    std = math.sqrt(sum((s - mean) ** 2 for s in finite) / len(finite))
    return [[(float(s) - mean) / std if std > TIE_STD and math.isfinite(s) else 0.0 for s in row] for row in scores]


def token_char_ends(tokenizer: Any, ids: Sequence[int]) -> list[int]:
    """For each token of ``ids``, how many characters the text decoded from ``ids[:i + 1]`` holds, decoded as
    TRL decodes completions (``skip_special_tokens=True``): the offsets of the generated tokens themselves,
    not of a re-tokenization of the text. Non-decreasing and at most the full text's length (a prefix cut
    inside a multi-byte character may decode a replacement character early).

    >>> from prm.policy import build_char_tokenizer
    >>> tok = build_char_tokenizer()
    >>> token_char_ends(tok, tok("1+1 = 2\\n", add_special_tokens=False).input_ids + [tok.eos_token_id])
    [1, 2, 3, 4, 5, 6, 7, 8, 8]
    """
    ids = list(ids)
    if not ids:
        return []
    texts = tokenizer.batch_decode([ids[: i + 1] for i in range(len(ids))], skip_special_tokens=True)
    total, ends, running = len(texts[-1]), [], 0
    for text in texts:
        running = min(max(running, len(text)), total)
        ends.append(running)
    return ends


def step_end_tokens(char_ends: Sequence[int], spans: Sequence[Span]) -> list[int | None]:
    """The index of the token holding each span's last character (the first token whose decoded text reaches
    the span's end); None for an empty span or one ending past the decoded text.

    >>> step_end_tokens([1, 2, 3, 4, 5, 6, 7, 8, 8], [(0, 7), (0, 9), (3, 3)])
    [6, None, None]
    """
    out: list[int | None] = []
    for start, end in spans:
        i = bisect.bisect_left(char_ends, end)
        out.append(i if end > start and i < len(char_ends) else None)
    return out


def token_advantages(rewards: Sequence[float], end_tokens: Sequence[int | None], length: int) -> list[float]:
    """Per-token process advantage of one completion of ``length`` tokens: token ``j`` gets the sum of the
    rewards of the steps whose end token is at or after ``j``; tokens after the last step's end get 0, and a
    step with no end token (None) counts for nothing.

    >>> token_advantages([1.0, -2.0], [1, 3], 6)
    [-1.0, -1.0, -2.0, -2.0, 0.0, 0.0]
    >>> token_advantages([], [], 3)
    [0.0, 0.0, 0.0]
    """
    placed = [0.0] * length
    for reward, end in zip(rewards, end_tokens, strict=True):
        if end is not None and 0 <= end < length:
            placed[end] += reward
    out, running = [0.0] * length, 0.0
    for j in range(length - 1, -1, -1):
        running += placed[j]
        out[j] = running
    return out


def step_scores(scores: Sequence[float], n_steps: int) -> list[float]:
    """A completion's step scores padded with NaN to ``n_steps``: a completion the PRM did not score (a
    server's limit, a scoring error) has its spans but fewer scores, and its missing steps count as NaN.

    >>> step_scores([0.5], 3)
    [0.5, nan, nan]
    """
    return [float(s) for s in scores[:n_steps]] + [math.nan] * max(0, n_steps - len(scores))
