"""Shaping per-step PRM scores into one reward per completion, mixing in the verifiable outcome, and the
PROF-style consistency filter. Pure functions of floats: no model, no I/O.

Scores are P(step is good) in [0, 1], one per step, in order. The shapings:

* ``min``: the strict min over steps; ``soft_min``: PURE's ``sum_k w_k r_k`` with ``w = softmax(-r / T)``
  (Cheng et al. 2025, "Stop Summation"): a completion is as good as its worst step, so padding it with
  easy steps earns nothing, the hack the summed form invites.
* ``clip``: ``sum_k min(r_k - eta, 0)``; ``delta``: ``r_k - r_{k+1}`` per step, the last step kept, so the
  sum telescopes to ``r_0``; ``clip_delta``: Delta over clipped steps (Gao et al. 2024, "On Designing
  Effective RL Reward at Training Time"). As one scalar per completion, Delta's sum is its first step's
  score: Delta is meant for per-step (dense) credit, which :func:`delta` returns alongside the sum.
* ``sum``, ``mean``, ``last``: the naive forms, for comparison.

A completion with no steps is shaped as one step scored :data:`~prm.rewards.constants.NO_STEP_SCORE` (0):
the worst single-step value under every shaping, so writing nothing never beats writing something.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from prm.rewards.config import RewardConfig
from prm.rewards.constants import NO_STEP_SCORE

__all__ = ["SHAPINGS", "ProfVerdict", "ShapedReward", "clip", "combine", "delta", "last", "mean", "min_form",
           "prof_filter", "reward_for", "soft_min", "total", "with_off_policy"]


def _nonempty(scores: Sequence[float]) -> list[float]:
    return [float(s) for s in scores] if len(scores) else [NO_STEP_SCORE]


def min_form(scores: Sequence[float]) -> float:
    """The lowest step score.

    >>> min_form([0.9, 0.2, 0.7]), min_form([])
    (0.2, 0.0)
    """
    return min(_nonempty(scores))


def soft_min(scores: Sequence[float], temperature: float) -> float:
    """PURE's soft min: ``sum_k w_k r_k`` with ``w = softmax(-r / temperature)``.

    >>> round(soft_min([0.0, 1.0], 1.0), 4)  # weights (e/(1+e), 1/(1+e)) = (0.7311, 0.2689)
    0.2689
    """
    r = _nonempty(scores)
    low = min(r)  # shift so the largest exponent is 0: exp never overflows however small T is
    weights = [math.exp(-(x - low) / temperature) for x in r]
    return sum(w * x for w, x in zip(weights, r, strict=True)) / sum(weights)


def clip(scores: Sequence[float], eta: float) -> float:
    """Clip: ``sum_k min(r_k - eta, 0)``, never above 0.

    >>> clip([0.9, 0.3, 0.1], 0.5)  # 0 + (-0.2) + (-0.4)
    -0.6
    """
    return round(sum(min(x - eta, 0.0) for x in _nonempty(scores)), 12)


def delta(scores: Sequence[float]) -> tuple[list[float], float]:
    """Delta: per-step values ``r_k - r_{k+1}`` with the last step's ``r_K`` kept, and their sum (= ``r_0``).
    No steps: no per-step values, and the sum of one NO_STEP_SCORE step.

    >>> delta([0.9, 0.6, 0.8]), delta([])
    (([0.3, -0.2, 0.8], 0.9), ([], 0.0))
    """
    if not len(scores):
        return [], NO_STEP_SCORE
    r = [float(s) for s in scores]
    values = [round(r[k] - r[k + 1], 12) for k in range(len(r) - 1)] + [r[-1]]
    return values, round(sum(values), 12)


def total(scores: Sequence[float]) -> float:
    """The summed form (the one PURE shows is hacked by adding steps).

    >>> total([0.5, 0.25])
    0.75
    """
    return sum(_nonempty(scores))


def mean(scores: Sequence[float]) -> float:
    """The mean step score.

    >>> mean([0.5, 0.25])
    0.375
    """
    r = _nonempty(scores)
    return sum(r) / len(r)


def last(scores: Sequence[float]) -> float:
    """The last step's score (the PRM's view of the whole solution, as an ORM would read it).

    >>> last([0.5, 0.25])
    0.25
    """
    return _nonempty(scores)[-1]


# name -> process reward of the scores under a config; one entry per RewardConfig.shaping value.
SHAPINGS: dict[str, Callable[[Sequence[float], RewardConfig], float]] = {
    "min": lambda r, c: min_form(r),
    "soft_min": lambda r, c: soft_min(r, c.temperature),
    "clip": lambda r, c: clip(r, c.eta),
    "delta": lambda r, c: delta(r)[1],
    "clip_delta": lambda r, c: delta([min(x - c.eta, 0.0) for x in _nonempty(r)])[1],
    "sum": lambda r, c: total(r),
    "mean": lambda r, c: mean(r),
    "last": lambda r, c: last(r),
}


def combine(process_reward: float, outcome_reward: float, weight: float) -> float:
    """``(1 - weight) * process + weight * outcome``: 0 is the PRM alone, 1 the verifiable outcome alone.

    >>> combine(0.4, 1.0, 0.5), combine(0.4, 1.0, 0.0), combine(0.4, 0.0, 1.0)
    (0.7, 0.4, 0.0)
    """
    return round((1.0 - weight) * process_reward + weight * outcome_reward, 12)


@dataclass(frozen=True)
class ProfVerdict:
    """Whether a sample's outcome and process agree, and the weight the PROF filter gives it."""

    weight: float  # 1.0 when they agree, the configured prof_weight when not
    flag: str  # "agree", "right_answer_low_step" or "wrong_answer_all_high"

    @property
    def disagree(self) -> bool:
        return self.flag != "agree"


def prof_filter(scores: Sequence[float], outcome: float, low: float, high: float, weight: float) -> ProfVerdict:
    """PROF-style consistency check (Ye et al. 2025, "Beyond Correctness"): a right answer (outcome >= 0.5)
    reached through a step scored below ``low``, or a wrong one whose every step is above ``high``, is a
    sample the two rewards disagree on; it gets ``weight`` (0 drops it), every other sample 1.

    >>> prof_filter([0.9, 0.2], 1.0, 0.5, 0.5, 0.0)
    ProfVerdict(weight=0.0, flag='right_answer_low_step')
    >>> prof_filter([0.9, 0.8], 0.0, 0.5, 0.5, 0.25)
    ProfVerdict(weight=0.25, flag='wrong_answer_all_high')
    >>> prof_filter([0.9, 0.2], 0.0, 0.5, 0.5, 0.0).flag
    'agree'
    """
    r = _nonempty(scores)
    if outcome >= 0.5 and min(r) < low:
        return ProfVerdict(weight, "right_answer_low_step")
    if outcome < 0.5 and min(r) > high:
        return ProfVerdict(weight, "wrong_answer_all_high")
    return ProfVerdict(1.0, "agree")


@dataclass(frozen=True)
class ShapedReward:
    """One completion's reward and what it was made of (for logging)."""

    reward: float  # what the RL framework optimizes
    process: float  # the shaped PRM score alone
    outcome: float | None  # 1.0 right, 0.0 wrong / no answer / truncated; None when no gold answer was given
    n_steps: int
    min_step_score: float  # the lowest raw P(good) (NO_STEP_SCORE for no steps): the usual hacking signal
    prof_weight: float = 1.0
    prof_flag: str = "agree"

    def extras(self) -> dict[str, float]:
        """Numeric fields for a framework's logs (verl averages every key it is given, so all are numbers).

        >>> ShapedReward(0.7, 0.4, 1.0, 2, 0.4).extras()["prof_disagree"]
        0.0
        """
        return {"process_reward": self.process, "outcome_reward": -1.0 if self.outcome is None else self.outcome,
                "n_steps": float(self.n_steps), "min_step_score": self.min_step_score,
                "prof_weight": self.prof_weight, "prof_disagree": float(self.prof_flag != "agree")}


def with_off_policy(scores: Sequence[float], off_policy: Sequence[bool | None], policy: str) -> list[float]:
    """The step scores a shaping reads: a step flagged off-policy scored :data:`NO_STEP_SCORE` under ``"wrong"``,
    as the PRM scored it under ``"keep"``; steps without a flag (None, or none given) keep their score.

    >>> with_off_policy([0.9, 0.99], [False, True], "wrong"), with_off_policy([0.9, 0.99], [False, True], "keep")
    ([0.9, 0.0], [0.9, 0.99])
    """
    if policy == "keep" or not off_policy:
        return [float(x) for x in scores]
    return [NO_STEP_SCORE if flag else float(x) for x, flag in zip(scores, off_policy, strict=True)]


def reward_for(config: RewardConfig, scores: Sequence[float], outcome: float | None,
               off_policy: Sequence[bool | None] = ()) -> ShapedReward:
    """The reward of one completion: ``config.shaping`` over the step scores, mixed with the outcome by
    ``config.outcome_weight``, times the PROF weight when ``config.prof_filter`` is on.

    ``outcome`` is None when there is no gold answer; that is allowed only for a PRM-only reward
    (``outcome_weight=0`` and no PROF filter), since either would otherwise be computed from a guess.

    >>> r = reward_for(RewardConfig(shaping="min", outcome_weight=0.5), [0.9, 0.4], 1.0)
    >>> r.reward, r.process, r.n_steps
    (0.7, 0.4, 2)
    >>> reward_for(RewardConfig(prof_filter=True), [0.9, 0.4], 1.0).reward  # right answer, weak step: dropped
    0.0
    >>> reward_for(RewardConfig(outcome_weight=0.0), [0.9, 0.99], None, off_policy=[False, True]).reward
    0.0

    ``off_policy`` flags per step (:func:`with_off_policy` under ``config.off_policy``).
    """
    scores = with_off_policy(scores, off_policy, config.off_policy)
    process = float(SHAPINGS[config.shaping](scores, config))
    low = min_form(scores)
    if outcome is None:
        if config.outcome_weight > 0 or config.prof_filter:
            raise ValueError(f"no outcome reward (no gold answer) but outcome_weight={config.outcome_weight} and "
                             f"prof_filter={config.prof_filter} need one; pass the gold answer, or use a PRM-only "
                             "reward: RewardConfig(outcome_weight=0, prof_filter=False)")
        return ShapedReward(process, process, None, len(scores), low)
    reward = combine(process, float(outcome), config.outcome_weight)
    if not config.prof_filter:
        return ShapedReward(reward, process, float(outcome), len(scores), low)
    verdict = prof_filter(scores, float(outcome), config.prof_low, config.prof_high, config.prof_weight)
    return ShapedReward(round(reward * verdict.weight, 12), process, float(outcome), len(scores), low,
                        verdict.weight, verdict.flag)
