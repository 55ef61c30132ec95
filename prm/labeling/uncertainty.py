"""How sure a PRM is of a solution's steps: one small interface, three estimates, and ActPRM's trust rule.

An estimate turns ``(problem, steps)`` items into :class:`StepBelief`s: the mean P(good) of every step and its
spread over stochastic passes. :func:`is_trusted` is the rule of ActPRM (Duan et al. 2025, sail-sg/ActivePRM) with
whatever estimate is chosen: a solution is trusted only when every step up to (and including) the first predicted
error (the first step with P(good) < 0.5; every step when none is) is confident, P >= ``high`` or P <= ``low``,
and its spread is at most ``max_std``.

* ``calibrated`` (the default): one deterministic pass, the PRM's step logit Platt-scaled
  (:func:`platt`) on labeled steps of the same policy's solutions (the labels a seed set already bought); no
  spread. The trust rule's 0.1 / 0.5 / 0.9 assume probabilities that mean what they say, and a PRM's need not:
  the shipped LM-head PRM puts some step below 0.5 in nearly every solution of its own lengths, so its raw first
  predicted error is almost never the true one, and calibrated it mostly is (``benchmarks/uncertainty.py``; the
  figures are on the docs' results page "Uncertainty estimates"). With fewer than :data:`MIN_CALIBRATION_STEPS`
  labeled steps, or one class only, there is nothing to fit and the estimate is ``band``'s (the caller says so).
* ``band``: the PRM's own probabilities, no spread: ActPRM's rule with an ensemble of one. Right for a PRM whose
  probabilities are calibrated; works with any :class:`prm.scoring.Scorer`.
* ``dropout``: ``passes`` forward passes with the PRM's dropout layers switched on (Gal and Ghahramani's MC
  dropout), each seeded; the belief is their mean and standard deviation. It needs a PRM run by transformers in
  this process (a ``model`` attribute holding the torch module) whose dropout layers have p > 0, or ``dropout_p``
  to set one (a classifier PRM's head has p = 0.1 by default; the LM-head PRM has none); it costs ``passes``
  scoring passes.

ActPRM's own estimate, an ensemble of small heads on one frozen backbone, is
:class:`prm.labeling.head_ensemble.HeadEnsemble`. Fit on the same labels it ranks its own mistakes better than
``calibrated`` but makes more of them, so it leaves more wrong solutions among those not labeled and trusts almost
none (the same benchmark); it is not a choice of ``ActiveConfig``.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from prm.scoring import Scorer

UNCERTAINTIES = ("calibrated", "band", "dropout")
# Labeled steps ``calibrated`` needs (of both classes) before it fits; below it the estimate is ``band``'s.
MIN_CALIBRATION_STEPS = 20
_CLIP = 1e-6  # probabilities are clipped to [eps, 1 - eps] before their logit
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


def _logit(p: float) -> float:
    q = min(max(float(p), _CLIP), 1 - _CLIP)
    return math.log(q / (1 - q))


def platt(scores: Sequence[float], labels: Sequence[bool], prior: float = 1.0) -> tuple[float, float]:
    """``(a, b)`` of the Platt scaling ``sigmoid(a * logit(p) + b)`` that best fits ``labels`` (True = good) from the
    PRM's ``scores``: logistic regression on the standardized logit by Newton's method with step halving, under a
    Gaussian ``prior`` (an L2 pull of that weight) that keeps separable or constant scores finite.

    >>> a, b = platt([0.2] * 10 + [0.01] * 10, [True] * 9 + [False] + [False] * 10)
    >>> round(1 / (1 + math.exp(-(a * _logit(0.2) + b))), 1)  # 0.9 in the labels; the prior pulls 20 of them in
    0.8
    >>> a, b = platt([1e-30] * 8, [True] * 6 + [False] * 2)  # constant scores: the base rate (0.75), pulled in
    >>> a, round(1 / (1 + math.exp(-b)), 2)
    (0.0, 0.66)
    """
    if len(scores) != len(labels):
        raise ValueError(f"{len(scores)} scores but {len(labels)} labels")
    x = [_logit(p) for p in scores]
    mean = sum(x) / len(x)
    scale = math.sqrt(sum((xi - mean) ** 2 for xi in x) / len(x))
    if scale < 1e-9:  # one score for every step: only the base rate is left to fit
        scale = 0.0
    z = [(xi - mean) / scale if scale else 0.0 for xi in x]
    y = [1.0 if ok else 0.0 for ok in labels]

    def loss(w: float, c: float) -> float:
        return sum(math.log1p(math.exp(-abs(t))) + max(t, 0.0) - yi * t
                   for zi, yi in zip(z, y, strict=True) for t in (w * zi + c,)) + prior / 2 * (w * w + c * c)

    w, c = 0.0, 0.0
    for _ in range(100):
        ps = [1 / (1 + math.exp(-max(min(w * zi + c, 50.0), -50.0))) for zi in z]
        gw = sum((p - t) * zi for p, t, zi in zip(ps, y, z, strict=True)) + prior * w
        gc = sum(p - t for p, t in zip(ps, y, strict=True)) + prior * c
        h = [p * (1 - p) for p in ps]
        hww = sum(hi * zi * zi for hi, zi in zip(h, z, strict=True)) + prior
        hwc = sum(hi * zi for hi, zi in zip(h, z, strict=True))
        hcc = sum(h) + prior
        det = hww * hcc - hwc * hwc
        dw, dc = (hcc * gw - hwc * gc) / det, (hww * gc - hwc * gw) / det
        step, before = 1.0, loss(w, c)
        while step > 1e-6 and loss(w - step * dw, c - step * dc) > before:
            step /= 2
        w, c = w - step * dw, c - step * dc
        if abs(step * dw) + abs(step * dc) < 1e-10:
            break
    if scale == 0:
        return 0.0, c
    return w / scale, c - w * mean / scale


class CalibratedUncertainty:
    """The PRM's probabilities Platt-scaled on ``labeled`` steps (``(problem, steps)`` items and their per-step
    labels, True = good), fit on the same scoring pass; no spread. :attr:`fitted` says what it fit, or why it could
    not (then its beliefs are the PRM's own, as ``band``)."""

    def __init__(self, labeled: Items = (), labels: Sequence[Sequence[bool]] = ()) -> None:
        if len(labeled) != len(labels):
            raise ValueError(f"{len(labeled)} labeled solutions but {len(labels)} label lists")
        self.labeled, self.labels = list(labeled), [list(y) for y in labels]
        self.fitted = ""

    def beliefs(self, scorer: Scorer, items: Items) -> list[StepBelief]:
        rows = scorer.score_batch([*self.labeled, *items])
        known = [(p, y) for row, ys in zip(rows, self.labels, strict=False) for p, y in zip(row, ys, strict=True)]
        good = sum(y for _, y in known)
        if len(known) < MIN_CALIBRATION_STEPS or good in (0, len(known)):
            self.fitted = (f"none: {len(known)} labeled steps ({good} good), at least {MIN_CALIBRATION_STEPS} of "
                           "both classes are needed; the PRM's own probabilities were used")
            return [StepBelief(tuple(map(float, row)), (0.0,) * len(row)) for row in rows[len(self.labeled):]]
        a, b = platt([p for p, _ in known], [y for _, y in known])
        self.fitted = f"platt a={a:.3f} b={b:.3f} on {len(known)} labeled steps ({good} good)"
        out = []
        for row in rows[len(self.labeled):]:
            probs = tuple(1 / (1 + math.exp(-max(min(a * _logit(p) + b, 50.0), -50.0))) for p in row)
            out.append(StepBelief(probs, (0.0,) * len(probs)))
        return out


def estimate(name: str, *, passes: int, seed: int, dropout_p: float | None, labeled: Items = (),
             labels: Sequence[Sequence[bool]] = ()) -> Uncertainty:
    """The estimate called ``name`` (one of :data:`UNCERTAINTIES`); ``labeled`` and ``labels`` are what
    ``calibrated`` fits on."""
    if name == "calibrated":
        return CalibratedUncertainty(labeled, labels)
    if name == "band":
        return BandUncertainty()
    if name == "dropout":
        return DropoutUncertainty(passes, seed, dropout_p)
    raise ValueError(f"uncertainty={name!r} is unknown; use one of {UNCERTAINTIES}")
