"""The typed inputs and outputs every labeler shares: solutions in, step labels and costs out."""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

from prm.datagen import RolloutTarget, SolutionToLabel
from prm.labeling.constants import LABELER_VERSION


@dataclass(frozen=True)
class RolloutOutcome:
    """One continuation of a prefix: its text, whether it reached gold (None = ungradable), its length."""

    text: str
    is_correct: bool | None
    completion_tokens: int


@runtime_checkable
class RolloutSampler(Protocol):
    """Where rollouts come from: the engine behind a cache, or a scripted oracle in tests."""

    def sample(self, targets: Sequence[RolloutTarget], n: int | Sequence[int]) -> list[list[RolloutOutcome]]:
        """For each target, its first ``n`` (or ``n[i]``) outcomes: stored ones first, then fresh ones.

        ``n`` is the total wanted for the prefix, not an increment, so asking again for more returns the
        earlier outcomes plus new ones. Fewer come back only when the engine failed on that prefix.
        """
        ...

    def drain_new_rows(self) -> list[dict[str, Any]]:
        """``rollouts`` rows sampled since the last drain, for the caller to write; empties the buffer."""
        ...


@dataclass(frozen=True)
class StepLabel:
    """One ``step_labels`` row (without the provenance and partition columns the writer adds)."""

    solution_id: str
    problem_id: str
    step_idx: int
    method: str  # registry name, e.g. "mc", "mc_early_stop", "omegaprm"
    soft_label: float | None  # MC estimate in [0, 1]; None when the method did not estimate this prefix
    hard_label: bool | None  # True = step is good; None = unverifiable
    status: str  # labeled | by_convention | unverifiable
    n_rollouts: int  # graded rollouts behind soft_label (0 when by convention)
    n_correct: int
    first_error: int | None  # the solution's first wrong step by this method, -1 = none, None = not found
    params_json: str  # the labeler config, so a label says how it was made
    cost_rollouts: int = 0  # rollouts charged to this row (see LabelRun: rows sum to the run's totals)
    cost_tokens: int = 0
    labeler_version: str = LABELER_VERSION

    def to_row(self) -> dict[str, Any]:
        """The row as the ``step_labels`` writer expects it."""
        return {"solution_id": self.solution_id, "problem_id": self.problem_id, "step_idx": self.step_idx,
                "method": self.method, "soft_label": self.soft_label, "hard_label": self.hard_label,
                "status": self.status, "n_rollouts": self.n_rollouts, "n_correct": self.n_correct,
                "first_error": self.first_error, "labeler_version": self.labeler_version,
                "params_json": self.params_json, "cost_rollouts": self.cost_rollouts,
                "cost_tokens": self.cost_tokens}


R = TypeVar("R")
T = TypeVar("T")


@dataclass(frozen=True)
class LabelRun(Generic[R]):
    """What one ``label`` call produced: labels, the rollouts it paid for, and what it cost.

    ``cost_rollouts``/``cost_tokens`` count every rollout the method *used*, cached or fresh, so methods
    compare fairly however warm the cache was; ``new_rollouts`` are only the freshly sampled rows. ``result``
    is the method's own typed result, a frozen dataclass (the judge's :class:`prm.labeling.judge.JudgeRun`,
    consensus's :class:`prm.labeling.consensus.ConsensusResult`); ``extra`` holds plain counters.
    """

    method: str
    labels: tuple[StepLabel, ...]
    new_rollouts: tuple[dict[str, Any], ...]
    cost_rollouts: int
    cost_tokens: int
    sampler_calls: int  # batched sampler calls made (one per round)
    solution_ids: tuple[str, ...]  # solutions this run labeled (skipped ones excluded)
    extra: dict[str, Any] = field(default_factory=dict)  # method-specific counters (searches, screened out)
    result: R | None = None  # the method's typed result; None for methods with only labels and counters

    def rows(self) -> list[dict[str, Any]]:
        """``step_labels`` rows."""
        return [label.to_row() for label in self.labels]

    def result_as(self, kind: type[T]) -> T:
        """``result``, checked to be a ``kind`` (a labeler resolved by name is typed only at run time)."""
        if not isinstance(self.result, kind):
            raise TypeError(f"the {self.method!r} label run holds a {type(self.result).__name__} result, not a "
                            f"{kind.__name__}; was the method registered with another labeler?")
        return self.result


# A partition's rows by table name (``{"steps": [...], "step_labels": [...]}``): what a derived labeler reads.
PartitionRows = Mapping[str, Sequence[Mapping[str, Any]]]


@runtime_checkable
class Labeler(Protocol):
    """A method that labels solutions: chosen from :data:`prm.labeling.LABELERS` by name.

    ``label(solutions, engine, *, skip=())`` labels ``solutions`` (minus the ids in ``skip``, already labeled by
    an earlier run) and returns a :class:`LabelRun`. ``engine`` is what the method draws on, named by its
    registry entry's ``needs``: a :class:`RolloutSampler` for the rollout methods (``mc``, ``omegaprm``), a
    ``GenerationBackend`` for the LLM judge. ``name`` becomes ``step_labels.method``; ``config`` is the
    method's settings (written to ``params_json``).
    """

    name: str
    config: Any

    def label(self, solutions: Sequence[SolutionToLabel], sampler: Any, *,
              skip: Collection[str] = ()) -> LabelRun:
        """Label ``solutions`` (minus ids in ``skip``, already labeled by an earlier run)."""
        ...


@runtime_checkable
class DerivedLabeler(Protocol):
    """The variant for methods that derive labels from rows already in the warehouse (other methods' labels,
    verdicts, judgments, steps) rather than from solutions and an engine: ``progress``, the formal
    verifiers, ``consensus``.

    ``reads`` names the partition tables it needs; ``label(rows)`` gets them as :data:`PartitionRows` and
    returns a :class:`LabelRun` (its typed ``result`` and counters, e.g. ``verifications`` rows, in ``extra``).
    """

    name: str
    config: Any
    reads: tuple[str, ...]

    def label(self, rows: PartitionRows) -> LabelRun:
        """Labels derived from ``rows`` (one partition's tables, keyed by the names in ``reads``)."""
        ...


def derived_run(name: str, labels: Sequence[StepLabel], *, result: R | None = None, **extra: Any) -> LabelRun[R]:
    """A :class:`LabelRun` of a derived method: no rollouts, no sampler calls, costs summed from its rows."""
    return LabelRun(method=name, labels=tuple(labels), new_rollouts=(),
                    cost_rollouts=sum(lb.cost_rollouts for lb in labels),
                    cost_tokens=sum(lb.cost_tokens for lb in labels), sampler_calls=0,
                    solution_ids=tuple(dict.fromkeys(lb.solution_id for lb in labels)), extra=dict(extra),
                    result=result)


def params_json(name: str, config: Any) -> str:
    """The config as stable JSON."""
    from dataclasses import asdict

    return json.dumps({"method": name, **asdict(config)}, sort_keys=True)
