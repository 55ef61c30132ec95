"""Run config typed in the launchpad is checked before an asset works: a non-finite number in any asset's config is
refused naming its field, and a config with a zero-argument ``to_library`` is held to the library's bounds."""

# No `from __future__ import annotations`: Dagster reads the asset's config annotation at definition time.
import math

import dagster as dg
import pydantic
import pytest

import assets.generation
import assets.labeling
import assets.prm
import assets.problems
import assets.processbench
import assets.rl
import assets.search
import assets.verification
from assets.config_base import CheckedConfig

MODULES = (assets.generation, assets.labeling, assets.prm, assets.problems, assets.processbench, assets.rl,
           assets.search, assets.verification)
CONFIGS = sorted({c for m in MODULES for c in vars(m).values() if isinstance(c, type) and issubclass(c, CheckedConfig)
                  and c is not CheckedConfig}, key=lambda c: c.__name__)
FLOAT_FIELDS = [(c, name) for c in CONFIGS for name, f in c.model_fields.items()
                if f.annotation in (float, float | None)]


def test_every_asset_config_is_checked():
    plain = [c.__name__ for m in MODULES for c in vars(m).values() if isinstance(c, type)
             and issubclass(c, dg.Config) and not issubclass(c, CheckedConfig) and c.__module__ == m.__name__]
    assert plain == [] and len(CONFIGS) >= 17


@pytest.mark.parametrize("config,name", FLOAT_FIELDS, ids=[f"{c.__name__}.{n}" for c, n in FLOAT_FIELDS])
@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_a_non_finite_number_in_any_asset_config_is_refused_naming_its_field(config, name, value):
    with pytest.raises(pydantic.ValidationError, match=f"{name}=.* is not a finite number"):
        config(**{name: value})


def test_the_defaults_of_every_asset_config_pass():
    for config in CONFIGS:
        config()


class Knobs(CheckedConfig):
    learning_rate: float = 1e-3

    def to_library(self) -> float:
        from prm.settings import check_learning_rate

        return check_learning_rate("learning_rate", self.learning_rate)


def test_the_launchpad_path_refuses_before_the_asset_runs():
    ran = []

    @dg.asset
    def trains(config: Knobs) -> None:
        ran.append(config.learning_rate)

    for bad, says in ((math.nan, "not a finite number"), (1e10, r"learning_rate=10000000000.0 must be in \(0, 1\]")):
        with pytest.raises(Exception, match=says):
            dg.materialize([trains], run_config={"ops": {"trains": {"config": {"learning_rate": bad}}}})
    assert ran == []
    assert dg.materialize([trains], run_config={"ops": {"trains": {"config": {"learning_rate": 0.01}}}}).success
    assert ran == [0.01]
