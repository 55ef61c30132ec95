"""Three arms that use the PRM only where it can be checked, as pure functions over one group.

* ``first_error`` (VPPO, Liu et al. 2026, arXiv 2601.18984, "Save the Good Prefix"): the PRM only locates the first
  error, the first step scored below the threshold (the PRM's own wrong-step threshold,
  :attr:`prm.rewards.RewardConfig.prof_low`: P(good) 0.5, where its two classes meet). Each completion splits
  into a verified prefix (the steps before it) and the rest; every step gets 1 in the prefix and 0 after it, the
  group's indicators are normalised over all its steps (:func:`prm.rl.process_advantages.normalise_group`), and
  each token carries its own step's value (not a sum over later steps, so the prefix is rewarded and the rest
  penalised, whatever the number of steps). Mixed with the outcome advantage as the ``process`` arm mixes its own.
* ``progrs`` (PROGRS, arXiv 2604.02341): outcome-conditioned centering. The PRM scores of the group's *incorrect*
  completions are zero-meaned among those completions and added to the outcome advantage; correct completions keep
  the outcome advantage alone. A centred score is below 1 and a right answer's outcome advantage exceeds a wrong
  one's by at least 1 (binary outcomes, any group std <= 1), so a PRM can reorder wrong answers but never lift one
  above a right one (:func:`progrs_bonus`).
* ``flawed_penalty`` (FAPO, Ding et al. 2025, arXiv 2510.22543): a right answer whose PRM finds a wrong step (a
  step below the same threshold) earns ``1 - penalty`` instead of 1 (:func:`flawed_reward`); a scalar reward, so
  it is PROF's filter with ``prof_weight = 1 - penalty`` (:func:`flawed_reward_config`).

Defined results for bad input: a NaN step score is neither verified nor an error (it is skipped when locating the
first error and carries value 0); a completion with no step has no process part; a NaN completion score counts as
its group's mean (bonus 0).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from prm.rewards import RewardConfig

FIRST_ERROR_THRESHOLD = RewardConfig().prof_low  # the PRM's own wrong-step threshold (PROF's prof_low): P(good) 0.5
# FAPO's penalty is parameter-free on its {-1, +1} outcome scale: a flawed positive earns 0, halfway between a right
# and a wrong answer. On this project's {0, 1} outcome that is 1 - 0.5; RLRunConfig.flawed_penalty can move it.
DEFAULT_FLAWED_PENALTY = 0.5


def first_error(scores: Sequence[float], threshold: float = FIRST_ERROR_THRESHOLD) -> int:
    """Index of the first finite step score below ``threshold``; ``len(scores)`` when none is (all verified).

    >>> first_error([0.9, 0.4, 0.1], 0.5), first_error([0.9, float("nan"), 0.6], 0.5), first_error([], 0.5)
    (1, 3, 0)
    """
    return next((k for k, s in enumerate(scores) if math.isfinite(s) and s < threshold), len(scores))


def verified_prefix_values(scores: Sequence[Sequence[float]], threshold: float = FIRST_ERROR_THRESHOLD
                           ) -> list[list[float]]:
    """Per step of each completion of one group: 1 before its first error, 0 from it on (NaN stays NaN), then
    normalised over the group's steps (mean 0, std 1; all 0 when every step is alike).

    >>> verified_prefix_values([[0.9, 0.2], [0.8, 0.7]], 0.5)
    [[0.5773502691896258, -1.7320508075688774], [0.5773502691896258, 0.5773502691896258]]
    >>> verified_prefix_values([[0.9], [0.8, 0.6]], 0.5)  # every step verified: a tie, no process signal
    [[0.0], [0.0, 0.0]]
    """
    from prm.rl.process_advantages import normalise_group

    marks = []
    for row in scores:
        cut = first_error(row, threshold)
        marks.append([math.nan if not math.isfinite(s) else float(k < cut) for k, s in enumerate(row)])
    return normalise_group(marks)


def value_step_rewards(values: Sequence[float], end_tokens: Sequence[int | None]) -> list[float]:
    """Per-step rewards whose sums from each step on are the steps' own ``values``, for
    :func:`prm.rl.process_advantages.token_advantages`: every token then carries its own step's value. Steps with
    no end token get 0 and are left out of the telescoping (their tokens belong to the next placed step).

    >>> value_step_rewards([1.0, 1.0, -1.0], [2, 5, 9])
    [0.0, 2.0, -1.0]
    >>> value_step_rewards([1.0, 0.5, -1.0], [2, None, 9])
    [2.0, 0.0, -1.0]
    """
    placed = [k for k, end in enumerate(end_tokens) if end is not None]
    out = [0.0] * len(values)
    for i, k in enumerate(placed):
        later = values[placed[i + 1]] if i + 1 < len(placed) else 0.0
        out[k] = float(values[k]) - float(later)
    return out


def first_error_step_rewards(scores: Sequence[Sequence[float]], end_tokens: Sequence[Sequence[int | None]],
                             threshold: float = FIRST_ERROR_THRESHOLD) -> list[list[float]]:
    """One group's per-step rewards under VPPO's verified prefix (:func:`verified_prefix_values`, placed so each
    token gets its own step's value by :func:`value_step_rewards`).

    >>> rows = first_error_step_rewards([[0.9, 0.2], [0.8, 0.7]], [[1, 3], [1, 3]], 0.5)
    >>> [[round(x, 3) for x in row] for row in rows]  # summed from each step on: 0.577, -1.732; 0.577, 0.577
    [[2.309, -1.732], [0.0, 0.577]]
    """
    values = verified_prefix_values(scores, threshold)
    return [value_step_rewards(v, e) for v, e in zip(values, end_tokens, strict=True)]


def progrs_bonus(outcomes: Sequence[float | None], scores: Sequence[float]) -> list[float]:
    """PROGRS' addition to each completion's outcome advantage in one group: an incorrect completion's PRM score
    minus the mean over the group's incorrect completions; 0 for a correct one, and for a NaN score or a missing
    outcome (None: ungraded, never treated as wrong).

    >>> progrs_bonus([1.0, 0.0, 0.0, 0.0], [0.1, 0.9, 0.5, 0.1])
    [0.0, 0.4, 0.0, -0.4]
    >>> progrs_bonus([0.0], [0.3]), progrs_bonus([1.0, 1.0], [0.2, 0.9])  # one wrong; all correct
    ([0.0], [0.0, 0.0])
    """
    wrong = [i for i, o in enumerate(outcomes) if o is not None and o < 0.5 and math.isfinite(scores[i])]
    if not wrong:
        return [0.0] * len(outcomes)
    mean = sum(float(scores[i]) for i in wrong) / len(wrong)
    out = [0.0] * len(outcomes)
    for i in wrong:
        out[i] = round(float(scores[i]) - mean, 12)  # rounding: ties stay exactly 0
    return out


def flawed_reward(outcome: float | None, scores: Sequence[float], penalty: float = DEFAULT_FLAWED_PENALTY,
                  threshold: float = FIRST_ERROR_THRESHOLD) -> float:
    """FAPO's reward of one completion: 1 for a right answer, ``1 - penalty`` for a right answer whose PRM finds a
    step below ``threshold`` (a flawed positive), 0 otherwise. The same number the arm's
    :func:`flawed_reward_config` gives through :mod:`prm.rewards`.

    >>> flawed_reward(1.0, [0.9, 0.8]), flawed_reward(1.0, [0.9, 0.3]), flawed_reward(0.0, [0.9])
    (1.0, 0.5, 0.0)
    """
    if not outcome or outcome < 0.5:
        return 0.0
    return 1.0 - penalty if first_error(scores, threshold) < len(scores) else 1.0


def flawed_reward_config(penalty: float = DEFAULT_FLAWED_PENALTY,
                         threshold: float = FIRST_ERROR_THRESHOLD) -> RewardConfig:
    """The ``flawed_penalty`` arm's reward: the outcome alone, with PROF's filter weighting a right answer that has
    a step below ``threshold`` by ``1 - penalty`` (a wrong answer's reward is 0 whatever its weight).

    >>> flawed_reward_config(0.25).prof_weight
    0.75
    """
    return RewardConfig(shaping="min", outcome_weight=1.0, prof_filter=True, prof_low=threshold,
                        prof_weight=1.0 - penalty)

