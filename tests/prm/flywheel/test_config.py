"""The flywheel's settings and round naming: validated up front, one partition per round, windows of rounds."""

from __future__ import annotations

import pytest

from prm.flywheel import FlywheelConfig, round_of, round_source, window_rounds
from prm.flywheel.checks import hacking_in_band, policy_holds, prm_no_worse
from prm.training import TrainingSetConfig


def test_round_sources_round_trip_and_refuse_what_is_not_a_round() -> None:
    assert [round_of(round_source(k)) for k in (0, 7, 12)] == [0, 7, 12]
    assert round_of("arith") is None and round_of("flywheel-r") is None and round_of("flywheel-r1x") is None
    for bad in (-1, True, 1.0):
        with pytest.raises(ValueError, match="must be an integer >= 0"):
            round_source(bad)


def test_the_training_set_reads_the_window_of_rounds() -> None:
    assert FlywheelConfig().training_set(2).source == ("flywheel-r0", "flywheel-r1", "flywheel-r2")
    assert FlywheelConfig(window=1).training_set(2).source == ("flywheel-r2",)
    assert window_rounds(5, 3) == [3, 4, 5]
    with pytest.raises(ValueError, match="window=0 must be >= 1"):
        FlywheelConfig(window=0)


def test_a_config_that_cannot_run_fails_before_any_model_loads() -> None:
    with pytest.raises(ValueError, match="lacks the RL run's training difficulties"):
        FlywheelConfig(n_ops=(6, 7, 8))
    with pytest.raises(ValueError, match="must be a multiple of num_generations"):
        FlywheelConfig(rl_batch_size=12)
    with pytest.raises(ValueError, match=r"arms .* are unknown"):
        FlywheelConfig(arm="prm_mean")


def test_a_training_set_source_may_be_several_sources_but_not_none_of_them() -> None:
    assert TrainingSetConfig(method="truth", source=["a", "b"]).source == ("a", "b")
    with pytest.raises(ValueError, match="names no source"):
        TrainingSetConfig(method="truth", source=())


def test_the_round_checks_judge_registry_metrics() -> None:
    assert prm_no_worse(0, {}, 0.05).passed
    assert not prm_no_worse(2, {"f1_fresh": 0.4, "f1_previous": 0.6}, 0.05).passed
    assert policy_holds({"acc_before": 0.3, "acc_after": 0.25}, 0.1).passed
    assert not policy_holds({}, 0.1).passed
    start = {"steps_before": 7.0, "chars_before": 80.0}
    assert hacking_in_band({"steps_after": 8.0, "chars_after": 90.0}, start, 0.5).passed
    assert not hacking_in_band({"steps_after": 8.0, "chars_after": 200.0}, start, 0.5).passed
    assert not hacking_in_band({"steps_after": 8.0, "chars_after": 90.0}, {}, 0.5).passed
