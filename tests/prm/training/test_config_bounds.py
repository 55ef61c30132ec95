"""Every numeric field of the training configs refuses NaN, the infinities and an absurd size, naming the field.

Table-driven over ``dataclasses.fields``: a numeric field added later is swept without a new test line.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import pytest

from prm.judge_training.config import JudgeTrainConfig
from prm.policy import PolicyTrainConfig
from prm.training import ImplicitPRMConfig, PRMTrainConfig, TrainingSetConfig

# Field annotations (strings under `from __future__ import annotations`) of the numbers a user sets.
NUMBER_TYPES = {"int", "float", "int | None", "float | None"}
NUMBER_TUPLES = {"tuple[int, ...]", "tuple[float, ...]"}
# Not a number in range: NaN, both infinities, and a size no run means (a typo: 1e10 for 1e-10, a stray digit).
BAD = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf, "absurd": 1e30}
ABSURD_INT = 10**15


def numeric_fields(config: type) -> list[dataclasses.Field]:
    return [f for f in dataclasses.fields(config) if str(f.type) in NUMBER_TYPES | NUMBER_TUPLES]


def sweep(configs: dict[type, dict[str, Any]]) -> list[Any]:
    """``pytest.param(config class, required kwargs, field, bad value)`` for every numeric field and bad value."""
    cases = []
    for config, required in configs.items():
        fields = numeric_fields(config)
        assert fields, f"{config.__name__} has no numeric field to sweep"
        for f in fields:
            for label, bad in BAD.items():
                value = ABSURD_INT if label == "absurd" and "int" in str(f.type) else bad
                if str(f.type) in NUMBER_TUPLES:
                    value = (value,)
                cases.append(pytest.param(config, required, f.name, value, id=f"{config.__name__}.{f.name}={label}"))
    return cases


def assert_refused(config: type, required: dict[str, Any], name: str, value: Any) -> None:
    with pytest.raises(ValueError, match=rf"\b{name}="):
        config(**{**required, name: value})


TRAINING_CONFIGS: dict[type, dict[str, Any]] = {
    PRMTrainConfig: {},
    ImplicitPRMConfig: {"labels": "step"},
    TrainingSetConfig: {"method": "truth"},
    PolicyTrainConfig: {},
    JudgeTrainConfig: {},
}


@pytest.mark.parametrize(("config", "required", "name", "value"), sweep(TRAINING_CONFIGS))
def test_every_numeric_field_refuses_a_value_out_of_range(config: type, required: dict, name: str,
                                                          value: Any) -> None:
    assert_refused(config, required, name, value)


def test_the_defaults_and_the_bounds_themselves_are_accepted() -> None:
    for config, required in TRAINING_CONFIGS.items():
        config(**required)
    PRMTrainConfig(learning_rate=1.0, weight_decay=1.0)  # the bounds are inclusive
    PRMTrainConfig(head="classifier", max_steps=-1, num_epochs=4)  # HF's "train by epochs"


@pytest.mark.parametrize("config", [PRMTrainConfig, ImplicitPRMConfig, PolicyTrainConfig, JudgeTrainConfig])
@pytest.mark.parametrize("rate", [-1, 0, 1e10])
def test_a_learning_rate_that_cannot_train_is_refused(config: type, rate: float) -> None:
    with pytest.raises(ValueError, match=r"learning_rate=.* must be in \(0, 1\] \(AdamW moves every weight"):
        config(learning_rate=rate)


@pytest.mark.parametrize("config", [PRMTrainConfig, ImplicitPRMConfig, PolicyTrainConfig])
def test_a_weight_decay_that_flips_the_weights_is_refused(config: type) -> None:
    with pytest.raises(ValueError, match=r"weight_decay=1e\+30 must be in \[0, 1\] \(each step multiplies"):
        config(weight_decay=1e30)
