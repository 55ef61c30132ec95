"""``Scorer``: what every PRM that scores steps offers, whatever its kind or engine (the type search, RL, the
rewards and evaluation take)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Scorer(Protocol):
    """A loaded PRM: P(step is good) for every step of one solution or of a batch.

    :class:`prm.scoring.PRMScorer`, :class:`prm.scoring.VLLMScorer`, :class:`prm.scoring.ImplicitPRMScorer` and
    :class:`prm.scoring.IncrementalScorer` are Scorers, and so is whatever a PRM kind's ``load`` returns
    (:data:`prm.scoring.PRM_KINDS`).
    """

    def score_steps(self, problem: str, steps: Sequence[str]) -> list[float]:
        """P(good) for every step, in order; ``[]`` for no steps."""
        ...

    def score_batch(self, items: Sequence[tuple[str, Sequence[str]]],
                    batch_size: int | None = None) -> list[list[float]]:
        """:meth:`score_steps` of every ``(problem, steps)``, in order."""
        ...

    def encode(self, problem: str, steps: Sequence[str]) -> Any:
        """What the PRM reads for ``(problem, steps)`` (``input_ids`` among it); raises
        :class:`prm.format.ContextOverflowError` when it does not fit the PRM's context."""
        ...

    def close(self) -> None:
        """Release what the scorer holds (a worker process); a no-op where there is nothing."""
        ...
