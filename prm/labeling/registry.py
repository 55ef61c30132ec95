"""Labelers by name, one entry per method of the method table (``warehouse.methods``) that the pipeline computes.

Every entry takes its config and builds an object with the one ``label`` call (:class:`prm.labeling.Labeler`, or
the :class:`prm.labeling.DerivedLabeler` variant for methods that read rows already in the warehouse). ``needs``
says what ``label`` takes besides the solutions: ``rollouts`` (a RolloutSampler), ``backend`` (a
GenerationBackend) or ``rows`` (the partition's tables named by the labeler's ``reads``).
Adding a method is its method-table row, one module and one line here (docs/how-to/add-label-method.md): the
recipe's vocabulary, the asset that writes its labels and that asset's checks all follow from the table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from prm.labeling.active import ActiveConfig, ActiveLabeler
from prm.labeling.consensus import ConsensusConfig, ConsensusLabeler
from prm.labeling.formal import FormalConfig, FormalLabeler
from prm.labeling.judge import JudgeConfig, JudgeLabeler
from prm.labeling.mc import MCConfig, MCLabeler
from prm.labeling.omega_search import OmegaPRMConfig
from prm.labeling.omegaprm import OmegaPRMLabeler
from prm.labeling.progress import ProgressConfig, ProgressLabeler
from prm.labeling.reference_check import ReferenceConfig, ReferenceLabeler
from prm.labeling.types import DerivedLabeler, Labeler
from warehouse.methods import method, method_names

NEEDS = ("rollouts", "backend", "rows")


@dataclass(frozen=True)
class LabelerSpec:
    """How to build a registered labeler: its config type, default config, constructor and what ``label`` takes."""

    config_type: type
    default: Any
    build: Callable[[Any, str], Labeler | DerivedLabeler]
    needs: str  # one of NEEDS

    def __post_init__(self) -> None:
        if self.needs not in NEEDS:
            raise ValueError(f"a labeler's needs is one of {NEEDS}, not {self.needs!r}")


LABELERS: dict[str, LabelerSpec] = {
    "mc": LabelerSpec(MCConfig, MCConfig(), MCLabeler, "rollouts"),
    "mc_early_stop": LabelerSpec(MCConfig, MCConfig(early_stop=True), MCLabeler, "rollouts"),
    "mc_adaptive": LabelerSpec(MCConfig, MCConfig(adaptive=True), MCLabeler, "rollouts"),
    "omegaprm": LabelerSpec(OmegaPRMConfig, OmegaPRMConfig(), OmegaPRMLabeler, "rollouts"),
    "progress": LabelerSpec(ProgressConfig, ProgressConfig(), ProgressLabeler, "rows"),
    "sympy": LabelerSpec(FormalConfig, FormalConfig(), FormalLabeler, "rows"),
    "z3": LabelerSpec(FormalConfig, FormalConfig(), FormalLabeler, "rows"),
    "sympy_ref": LabelerSpec(ReferenceConfig, ReferenceConfig(), ReferenceLabeler, "rows"),
    "judge": LabelerSpec(JudgeConfig, JudgeConfig(), JudgeLabeler, "backend"),
    "consensus": LabelerSpec(ConsensusConfig, ConsensusConfig(), ConsensusLabeler, "rows"),
    "active": LabelerSpec(ActiveConfig, ActiveConfig(), ActiveLabeler, "rollouts"),
}


def computed_methods() -> tuple[str, ...]:
    """Names of the method table's methods the pipeline computes, in table order.

    >>> computed_methods()
    ('mc', 'mc_early_stop', 'mc_adaptive', 'omegaprm', 'progress', 'sympy', 'z3', 'sympy_ref', 'judge', \
'consensus', 'active')
    """
    return tuple(n for n in method_names() if method(n).computed)


def labelers_needing(needs: str) -> tuple[str, ...]:
    """Registered names whose ``label`` takes ``needs``.

    >>> labelers_needing("rollouts")
    ('mc', 'mc_early_stop', 'mc_adaptive', 'omegaprm', 'active')
    """
    if needs not in NEEDS:
        raise ValueError(f"needs={needs!r} is unknown; use one of {NEEDS}")
    return tuple(n for n, spec in LABELERS.items() if spec.needs == needs)


if tuple(LABELERS) != computed_methods():  # one list of names: the method table's
    raise RuntimeError(f"prm/labeling/registry.py registers {tuple(LABELERS)} but warehouse/methods/table.py computes "
                       f"{computed_methods()}; register one labeler per computed method, in the table's order")


def get_labeler(name: str, config: Any = None) -> Labeler | DerivedLabeler:
    """The labeler registered as ``name``; ``config`` defaults to the entry's own.

    >>> get_labeler("mc_early_stop").config.early_stop
    True
    >>> get_labeler("omega")
    Traceback (most recent call last):
    ...
    ValueError: labeler 'omega' is unknown; use one of ['active', 'consensus', 'judge', 'mc', 'mc_adaptive', \
'mc_early_stop', 'omegaprm', 'progress', 'sympy', 'sympy_ref', 'z3']
    """
    if name not in LABELERS:
        raise ValueError(f"labeler {name!r} is unknown; use one of {sorted(LABELERS)}")
    spec = LABELERS[name]
    config = spec.default if config is None else config
    if not isinstance(config, spec.config_type):
        raise TypeError(f"labeler {name!r} takes a {spec.config_type.__name__}, got {type(config).__name__}; "
                        f"build one, e.g. {spec.config_type.__name__}()")
    return spec.build(config, name)
