"""How sure a PRM is of a solution's steps: one small interface, two estimates, and ActPRM's trust rule.

An estimate turns ``(problem, steps)`` items into :class:`StepBelief`s: the mean P(good) of every step and its
spread over stochastic passes. :func:`is_trusted` is the rule of ActPRM (Duan et al. 2025, sail-sg/ActivePRM) with
whatever estimate is chosen: a solution is trusted only when every step up to (and including) the first predicted
error (the first step with P(good) < 0.5; every step when none is) is confident, P >= ``high`` or P <= ``low``,
and its spread is at most ``max_std``.

* ``band`` (the default): one deterministic pass of the PRM; the spread is 0, so the rule is the confidence band
  alone. It is the simplest estimate that works with any :class:`prm.scoring.Scorer` (transformers, vLLM, an
  LM-head PRM, a scripted one in a test), costs one scoring pass, and is ActPRM's rule with an ensemble of one.
* ``dropout``: ``passes`` forward passes with the PRM's dropout layers switched on (Gal and Ghahramani's MC
  dropout), each seeded; the belief is their mean and standard deviation. It needs a PRM run by transformers in
  this process (a ``model`` attribute holding the torch module) whose dropout layers have p > 0, or ``dropout_p``
  to set one (a classifier PRM's head has p = 0.1 by default); it costs ``passes`` scoring passes.

ActPRM's own estimate, an ensemble of small heads trained on one frozen backbone, needs heads trained for it; it
would be a third implementation of :class:`Uncertainty` (a ``beliefs`` over the heads' outputs).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from prm.scoring import Scorer

UNCERTAINTIES = ("band", "dropout")
# A step is predicted wrong when its P(good) falls below this (the PRM's own decision point, as in ActPRM).
PREDICTED_GOOD = 0.5

Items = Sequence[tuple[str, Sequence[str]]]


@dataclass(frozen=True)
class StepBelief:
    """What the PRM believes of one solution: mean P(good) and its spread over passes, per step."""

    probs: tuple[float, ...]
    spread: tuple[float, ...]

    @property
    def first_error(self) -> int:
        """The first step predicted wrong (P(good) < 0.5); -1 when none is.

        >>> StepBelief((0.9, 0.2, 0.8), (0.0, 0.0, 0.0)).first_error
        1
        """
        return next((k for k, p in enumerate(self.probs) if p < PREDICTED_GOOD), -1)

    def checked_steps(self) -> range:
        """The steps the trust rule reads: up to and including the first predicted error, or all of them."""
        return range(len(self.probs) if self.first_error < 0 else self.first_error + 1)

    def unsure(self) -> float:
        """How unsure the PRM is: the largest ``1 - |2p - 1| + spread`` over the checked steps (0 = certain);
        the order in which unsure solutions go to the backing labeler, most unsure first."""
        return max((1 - abs(2 * self.probs[k] - 1) + self.spread[k] for k in self.checked_steps()), default=0.0)


def is_trusted(belief: StepBelief, *, low: float, high: float, max_std: float) -> bool:
    """ActPRM's rule: every checked step is confident (P >= high or P <= low) and its spread is <= max_std.

    >>> is_trusted(StepBelief((0.95, 0.05, 0.5), (0.0,) * 3), low=0.1, high=0.9, max_std=0.01)  # 0.5 is after
    True
    >>> is_trusted(StepBelief((0.95, 0.7), (0.0, 0.0)), low=0.1, high=0.9, max_std=0.01)
    False
    """
    return all((belief.probs[k] >= high or belief.probs[k] <= low) and belief.spread[k] <= max_std
               for k in belief.checked_steps())


class Uncertainty(Protocol):
    """An uncertainty estimate: a :class:`StepBelief` for every ``(problem, steps)`` item, in order."""

    def beliefs(self, scorer: Scorer, items: Items) -> list[StepBelief]:
        ...


class BandUncertainty:
    """One deterministic pass: the PRM's own step probabilities, no spread (the confidence band alone)."""

    def beliefs(self, scorer: Scorer, items: Items) -> list[StepBelief]:
        return [StepBelief(tuple(map(float, row)), (0.0,) * len(row)) for row in scorer.score_batch(list(items))]


class DropoutUncertainty:
    """``passes`` seeded passes with dropout on (MC dropout): mean and population std per step."""

    def __init__(self, passes: int, seed: int, dropout_p: float | None = None) -> None:
        self.passes, self.seed, self.dropout_p = passes, seed, dropout_p

    def beliefs(self, scorer: Scorer, items: Items) -> list[StepBelief]:
        import torch

        model = getattr(scorer, "model", None)
        if not isinstance(model, torch.nn.Module):
            raise TypeError(f"uncertainty='dropout' needs a PRM run by transformers in this process; "
                            f"{type(scorer).__name__} holds no torch model (use uncertainty='band')")
        runs: list[list[list[float]]] = []
        with _dropout_on(model, self.dropout_p):
            for i in range(self.passes):
                with torch.random.fork_rng(devices=_cuda_devices(model)):  # the caller's RNG state is untouched
                    torch.manual_seed(self.seed + i)
                    runs.append(scorer.score_batch(list(items)))
        beliefs = []
        for j in range(len(items)):
            per_step = torch.tensor([run[j] for run in runs], dtype=torch.float64)  # [passes, steps]
            if per_step.numel() == 0:
                beliefs.append(StepBelief((), ()))
                continue
            beliefs.append(StepBelief(tuple(per_step.mean(0).tolist()),
                                      tuple(per_step.std(0, unbiased=False).tolist())))
        return beliefs


def _cuda_devices(model: Any) -> list[int]:
    device = next(model.parameters()).device
    return [device.index or 0] if device.type == "cuda" else []


@contextlib.contextmanager
def _dropout_on(model: Any, p: float | None) -> Iterator[None]:
    """The model's dropout layers in train mode (``p`` set when given), everything else as it was; restored after."""
    import torch

    layers = [m for m in model.modules() if isinstance(m, torch.nn.modules.dropout._DropoutNd)]
    before = [(m, m.training, m.p) for m in layers]
    if not any((p if p is not None else m.p) > 0 for m in layers):
        raise ValueError(f"{type(model).__name__} has no dropout layer with p > 0, so every pass would agree; set "
                         "dropout_p (e.g. 0.1) or use uncertainty='band'")
    try:
        for m in layers:
            m.train()
            if p is not None:
                m.p = p
        yield
    finally:
        for m, training, old_p in before:
            m.train(training)
            m.p = old_p


def estimate(name: str, *, passes: int, seed: int, dropout_p: float | None) -> Uncertainty:
    """The estimate called ``name`` (one of :data:`UNCERTAINTIES`)."""
    if name == "band":
        return BandUncertainty()
    if name == "dropout":
        return DropoutUncertainty(passes, seed, dropout_p)
    raise ValueError(f"uncertainty={name!r} is unknown; use one of {UNCERTAINTIES}")
