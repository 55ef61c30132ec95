"""Every numeric field of the RL configs refuses NaN, the infinities and an absurd size, naming the field
(the sweep of tests/prm/training/test_config_bounds.py over the RL arms' configs)."""

from __future__ import annotations

from typing import Any

import pytest

from prm.rewards import RewardConfig
from prm.rl import RLRunConfig
from prm.rl.prime import PrimeConfig
from prm.rl.process_grpo import ProcessConfig
from tests.prm.training.test_config_bounds import assert_refused, sweep

RL_CONFIGS: dict[type, dict[str, Any]] = {
    RLRunConfig: {},
    PrimeConfig: {},
    ProcessConfig: {},
    RewardConfig: {},
}


@pytest.mark.parametrize(("config", "required", "name", "value"), sweep(RL_CONFIGS))
def test_every_numeric_field_refuses_a_value_out_of_range(config: type, required: dict, name: str,
                                                          value: Any) -> None:
    assert_refused(config, required, name, value)


@pytest.mark.parametrize("config", [RLRunConfig, PrimeConfig])
@pytest.mark.parametrize("rate", [-1, 0, float("nan"), float("inf"), 1e10])
def test_a_learning_rate_that_cannot_train_is_refused(config: type, rate: float) -> None:
    with pytest.raises(ValueError, match=r"learning_rate="):
        config(learning_rate=rate)


def test_the_defaults_and_every_arm_are_accepted() -> None:
    for config in RL_CONFIGS:
        config()
    RLRunConfig(arms=("outcome", "prm_min", "prm_sum", "prm_min_prof", "process", "prime"), eval_temperature=0)
