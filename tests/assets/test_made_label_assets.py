"""A label asset made from the registry takes its labeler's config in the launchpad, field for field."""

from __future__ import annotations

import dataclasses

import pydantic
import pytest

from assets.labeling import METHOD_ASSETS, method_config
from prm.labeling import ActiveConfig, MCConfig


def test_a_made_asset_takes_its_labelers_config_with_the_registered_defaults() -> None:
    config = method_config("active")
    assert set(config.model_fields) == {f.name for f in dataclasses.fields(ActiveConfig)}
    assert config().to_library() == ActiveConfig()
    assert config(max_share=0.25, backing="mc").to_library() == ActiveConfig(max_share=0.25, backing="mc")
    # a registered default that differs from the config type's own is the launchpad's default
    assert method_config("mc_early_stop")().to_library() == MCConfig(early_stop=True)
    made = {a.key.to_user_string(): a for a in METHOD_ASSETS}
    assert set(made["active_labels"].op.config_schema.as_field().config_type.fields) == set(config.model_fields)


def test_the_labelers_bounds_apply_when_the_launchpad_config_is_built() -> None:
    with pytest.raises(pydantic.ValidationError, match="max_share"):
        method_config("active")(max_share=2.0)
