"""How per-step PRM scores become one RL reward: the shaping, the outcome mix and the PROF filter."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from prm.rewards.constants import (
    DEFAULT_ETA,
    DEFAULT_OUTCOME_WEIGHT,
    DEFAULT_PROF_HIGH,
    DEFAULT_PROF_LOW,
    DEFAULT_PROF_WEIGHT,
    DEFAULT_TEMPERATURE,
    MAX_TEMPERATURE,
    PAD_TEXTS,
)
from prm.settings import check_range

# Kept in step with prm.rewards.shaping.SHAPINGS (a test checks it); listed here so the config validates
# without importing the shaping functions.
SHAPING_NAMES = ("min", "soft_min", "clip", "delta", "clip_delta", "sum", "mean", "last")
# What a step the PRM flags as off-policy (prm.scoring.implicit_scorer.off_policy) is worth: "wrong" scores it
# NO_STEP_SCORE, "keep" takes the PRM's score as it is. A policy paid for text its reference would not write is the
# reward hack an LM-head PRM invites, so "wrong" is the default.
OFF_POLICY_POLICIES = ("wrong", "keep")


@dataclass(frozen=True)
class RewardConfig:
    """One reward definition; :func:`prm.rewards.reward_for` reads nothing else.

    >>> RewardConfig(shaping="sum_of_steps")
    Traceback (most recent call last):
    ...
    ValueError: shaping='sum_of_steps' is not one of ('min', 'soft_min', 'clip', 'delta', 'clip_delta', ...)
    >>> RewardConfig(outcome_weight=1.5)
    Traceback (most recent call last):
    ...
    ValueError: outcome_weight=1.5 must be in [0, 1]: the reward is (1 - w) * process + w * outcome ...
    """

    shaping: str = "min"  # PURE's min-form: the summed form is the one seen hacked (see SHAPING_NAMES)
    temperature: float = DEFAULT_TEMPERATURE  # soft_min: weights softmax(-r / T); smaller is closer to the min
    eta: float = DEFAULT_ETA  # clip / clip_delta: a step costs min(r - eta, 0)
    outcome_weight: float = DEFAULT_OUTCOME_WEIGHT  # w of (1 - w) * process + w * outcome; 1 = outcome only
    prof_filter: bool = False  # PROF-style: down-weight samples whose outcome and process disagree
    prof_low: float = DEFAULT_PROF_LOW  # a right answer with a step below this disagrees
    prof_high: float = DEFAULT_PROF_HIGH  # a wrong answer with every step above this disagrees
    prof_weight: float = DEFAULT_PROF_WEIGHT  # the reward multiplier of a disagreeing sample (0 drops it)
    pad_texts: tuple[str, ...] = PAD_TEXTS  # special-token texts stripped from both ends before segmenting
    off_policy: str = "wrong"  # a step the PRM flags as off-policy: "wrong" (scored 0) or "keep" (its PRM score)

    def __post_init__(self) -> None:
        object.__setattr__(self, "pad_texts", tuple(self.pad_texts))  # a list from YAML/JSON is one config too
        for name in ("temperature", "eta", "outcome_weight", "prof_low", "prof_high", "prof_weight"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise ValueError(f"{name}={value!r} must be a finite number")
            object.__setattr__(self, name, float(value))
        if self.off_policy not in OFF_POLICY_POLICIES:
            raise ValueError(f"off_policy={self.off_policy!r} is not one of {OFF_POLICY_POLICIES}")
        if self.shaping not in SHAPING_NAMES:
            raise ValueError(f"shaping={self.shaping!r} is not one of {SHAPING_NAMES}")
        if self.temperature <= 0:
            raise ValueError(f"temperature={self.temperature} must be > 0; use shaping='min' for the hard min")
        check_range("temperature", self.temperature, high=MAX_TEMPERATURE,
                    why="past it the soft min is the mean; use shaping='mean'")
        check_range("eta", self.eta, low=0.0, high=1.0, why="Clip's threshold on a step's P(good)")
        if not 0.0 <= self.outcome_weight <= 1.0:
            raise ValueError(f"outcome_weight={self.outcome_weight} must be in [0, 1]: the reward is "
                             "(1 - w) * process + w * outcome (0 = PRM only, 1 = outcome only)")
        if not 0.0 <= self.prof_weight <= 1.0:
            raise ValueError(f"prof_weight={self.prof_weight} must be in [0, 1] (0 drops a disagreeing sample)")
        for name in ("prof_low", "prof_high"):
            check_range(name, getattr(self, name), low=0.0, high=1.0,
                        why="prof_low and prof_high are P(good) thresholds")

    def with_overrides(self, overrides: Mapping[str, Any]) -> RewardConfig:
        """This config with the fields named in ``overrides`` replaced; other keys are ignored, so a framework's
        kwargs (verl's ``reward_kwargs``, TRL's dataset columns) can be passed whole.

        >>> RewardConfig().with_overrides({"shaping": "clip", "data_source": "gsm8k"}).shaping
        'clip'
        """
        names = {f.name for f in fields(self)}
        chosen = {k: v for k, v in overrides.items() if k in names}
        return replace(self, **chosen) if chosen else self
