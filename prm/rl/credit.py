"""Per-step process credit that does not pay for fewer steps, as pure functions over one group's step scores.

DeepSeekMath's advantages (:mod:`prm.rl.process_advantages`) normalise every step score over the group and sum
the normalised rewards from a token on. A completion's return is then a *sum over its steps*, and with a
per-step baseline every below-average step costs once: writing the same work as fewer, longer steps (merging
operations into one line, the hack the LM-head PRM runs showed) raises the return. Two fixes, each mapping one
group's step scores to per-step rewards that :func:`prm.rl.process_advantages.token_advantages` turns into
per-token returns:

* ``pure`` (Cheng et al. 2025, "Stop Summation", PURE): soft min-form credit. A completion's steps share one
  credit: step ``k`` gets ``w_k * r_k`` with ``w = softmax(-r / T)`` over its steps (the sum is the soft min
  of :func:`prm.rewards.shaping.soft_min`), and the baseline is *per token*: the leave-one-out mean, over the
  group's other completions, of their credit per step token, times the step's own length in tokens. The
  baseline a completion pays then depends on how many tokens it wrote, not how many lines.
* ``clip_delta`` (Gao et al. 2024): each step's score clipped, ``min(r - eta, 0)``
  (:func:`prm.rewards.shaping.clip`), as per-step Delta rewards (:func:`prm.rewards.shaping.delta`), so a
  token's return is the clipped score of its own step alone; minus the group's mean completion credit.

Defined results for bad input, as :mod:`prm.rl.process_advantages`: a NaN score earns no credit and no
baseline; a completion with no steps has no per-step rewards; a group of one completion has no baseline.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from prm.rewards import clip, delta

# prm.rl.process_grpo.ProcessConfig.credit; "first_error" and "progrs": prm.rl.verified_arms
CREDITS = ("deepseek", "pure", "clip_delta", "first_error", "progrs")


def step_lengths(end_tokens: Sequence[int | None]) -> list[int]:
    """Tokens each step owns: from the token after the previous step's end through its own end; 0 for a step
    with no end token (it owns nothing the policy generated).

    >>> step_lengths([3, 9, None, 12])
    [4, 6, 0, 3]
    """
    out, previous = [], -1
    for end in end_tokens:
        if end is None or end <= previous:
            out.append(0)
            continue
        out.append(end - previous)
        previous = end
    return out


def soft_min_weights(scores: Sequence[float], temperature: float) -> list[float]:
    """PURE's weights ``softmax(-r / T)`` over a completion's finite scores; 0 for a NaN score.

    >>> [round(w, 4) for w in soft_min_weights([0.0, 1.0], 1.0)]
    [0.7311, 0.2689]
    >>> soft_min_weights([0.5, float("nan")], 0.1)
    [1.0, 0.0]
    """
    finite = [float(s) for s in scores if math.isfinite(s)]
    if not finite:
        return [0.0] * len(scores)
    low = min(finite)  # shift so the largest exponent is 0: exp never overflows however small T is
    raw = [math.exp(-(float(s) - low) / temperature) if math.isfinite(s) else 0.0 for s in scores]
    total = sum(raw)
    return [w / total for w in raw]


def pure_step_rewards(scores: Sequence[Sequence[float]], lengths: Sequence[Sequence[int]],
                      temperature: float) -> list[list[float]]:
    """One group's per-step rewards under PURE's soft min-form credit and per-token baseline: step ``k`` of
    completion ``i`` gets ``w_ik * r_ik - L_ik * b_i``, where ``b_i`` is the mean over the group's *other*
    completions of (their total credit / their step tokens). Summed over a completion's steps this is its soft
    min minus its token count times the others' credit per token: splitting or merging its lines changes
    neither term when the scores stay the same.

    >>> pure_step_rewards([[0.5, 0.5], [0.5]], [[10, 10], [20]], 0.1)
    [[0.0, 0.0], [0.0]]
    >>> [[round(x, 3) for x in row] for row in pure_step_rewards([[0.2], [0.8]], [[10], [10]], 0.1)]
    [[-0.6], [0.6]]
    """
    credit = [[w * float(s) if math.isfinite(s) else 0.0 for w, s in zip(soft_min_weights(row, temperature), row,
                                                                          strict=True)] for row in scores]
    owned = [[n if math.isfinite(s) else 0 for s, n in zip(row, lens, strict=True)]
             for row, lens in zip(scores, lengths, strict=True)]
    per_token = [sum(c) / sum(n) if sum(n) else None for c, n in zip(credit, owned, strict=True)]
    out = []
    for i, (row, lens) in enumerate(zip(credit, owned, strict=True)):
        others = [p for j, p in enumerate(per_token) if j != i and p is not None]
        base = sum(others) / len(others) if others else 0.0
        out.append([c - n * base for c, n in zip(row, lens, strict=True)])
    return out


def clip_delta_step_rewards(scores: Sequence[Sequence[float]], eta: float) -> list[list[float]]:
    """One group's per-step rewards under Clip-Delta: the Delta values of each completion's clipped scores
    (their sum from step ``k`` on is step ``k``'s clipped score), the first step's reduced by the group's mean
    completion credit (the clipped first step) so the group's returns centre on 0. NaN scores count as 0 cost.

    >>> clip_delta_step_rewards([[0.9, 0.3], [0.1]], 0.5)  # clipped [[0, -0.2], [-0.4]], mean first -0.2
    [[0.4, -0.2], [-0.2]]
    """
    clipped = [[min(float(s) - eta, 0.0) if math.isfinite(s) else 0.0 for s in row] for row in scores]
    values = [delta(row)[0] for row in clipped]
    totals = [clip(row[:1], eta) for row in scores if row and math.isfinite(row[0])]
    base = sum(totals) / len(totals) if totals else 0.0
    return [[round(v - base, 12) if k == 0 else v for k, v in enumerate(row)] for row in values]
