"""Labelers by name: every entry takes its config and has the same ``label`` call."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from prm.labeling.mc import MCConfig, MCLabeler
from prm.labeling.omega_search import OmegaPRMConfig
from prm.labeling.omegaprm import OmegaPRMLabeler
from prm.labeling.types import Labeler


@dataclass(frozen=True)
class LabelerSpec:
    """How to build a registered labeler: its config type, default config and constructor."""

    config_type: type
    default: Any
    build: Callable[[Any, str], Labeler]


LABELERS: dict[str, LabelerSpec] = {
    "mc": LabelerSpec(MCConfig, MCConfig(), lambda c, n: MCLabeler(c, n)),
    "mc_early_stop": LabelerSpec(MCConfig, MCConfig(early_stop=True), lambda c, n: MCLabeler(c, n)),
    "omegaprm": LabelerSpec(OmegaPRMConfig, OmegaPRMConfig(), lambda c, n: OmegaPRMLabeler(c, n)),
}


def get_labeler(name: str, config: Any = None) -> Labeler:
    """The labeler registered as ``name``; ``config`` defaults to the entry's own.

    >>> get_labeler("mc_early_stop").config.early_stop
    True
    >>> get_labeler("omega")
    Traceback (most recent call last):
    ...
    ValueError: labeler 'omega' is unknown; use one of ['mc', 'mc_early_stop', 'omegaprm']
    """
    if name not in LABELERS:
        raise ValueError(f"labeler {name!r} is unknown; use one of {sorted(LABELERS)}")
    spec = LABELERS[name]
    config = spec.default if config is None else config
    if not isinstance(config, spec.config_type):
        raise TypeError(f"labeler {name!r} takes a {spec.config_type.__name__}, got {type(config).__name__}; "
                        f"build one, e.g. {spec.config_type.__name__}()")
    return spec.build(config, name)
