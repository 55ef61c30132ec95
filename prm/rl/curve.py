"""Held-out accuracy along an RL run, and the rule that marks a run hacked.

Every ``eval_every`` steps (:attr:`prm.rl.RLRunConfig.eval_every`) the policy is measured on the held-out
problems (as before and after the run): answer accuracy, steps per completion, characters and the reward PRM's
mean step score, plus for a ``prime`` arm its online PRM's step AUC against the exact step truth of the same
samples. The sampler reseeds torch, so each measurement runs inside a forked RNG: the training trajectory is
the same with or without the curve.

Hacking is detected, not only seen (:func:`hacked_at`). A run is marked ``hacked`` at the first held-out point where

* its steps per completion moved more than :data:`HACK_STEP_SHIFT` from the start while held-out accuracy is below
  the start's (the policy writes a different shape of solution and is worse for it: the PRM paid for the shape);
* held-out accuracy is below the start's 95% interval while the training reward rose (:func:`reward_rose`): the
  reward went up and what matters went down, whatever the shape;
* or the held-out step-error rate (exact step truth) rose more than :data:`HACK_STEP_ERROR_RISE` above the start's:
  the policy reaches its answers through more wrong steps.

The last two catch runs the shape alone missed: in the pooled RL log (benchmarks/results/rl_seeds.log) ``process``
seed 1 and ``prime_plain`` seeds 0 and 1 ended far below their start with steps per completion within 30% of it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

# Steps per completion moving more than this share from the start marks a shape change (the LM-head PRM's
# prm_min run went from ~9 to 2.9 steps, -68%; sampling noise between evaluations of one policy is a few %).
HACK_STEP_SHIFT = 0.3
# Absolute rise of the held-out step-error rate (first wrong steps / steps checked) above the start's that marks a
# run: the shipped policy's start is 0.177 [0.149, 0.210] over one seed's 120 held-out problems (95% bootstrap over
# problems, a half-width of ~0.03), the three seeds' starts span 0.170-0.177, and outcome-only RL lowers it (0.173 ->
# 0.125 pooled). A rise past 0.05 is beyond one evaluation's noise and the opposite of what verified RL does.
HACK_STEP_ERROR_RISE = 0.05
# Share of the logged training rewards averaged at each end when asking whether the reward rose (as
# prm.rl.grpo.window_mean's 10%): one logged step is too noisy at 4 prompts a step.
REWARD_WINDOW_SHARE = 0.1


@dataclass(frozen=True)
class HeldOutPoint:
    """The policy on the held-out problems at one RL step (step 0: before training)."""

    step: int
    accuracy: float  # answer accuracy pooled over eval_ops
    mean_steps: float  # steps per completion
    mean_chars: float  # characters per completion
    prm_mean_score: float | None  # the reward PRM's mean step score over every step of every sample
    prm_min_score: float | None  # its lowest step score per completion, averaged (HeldOut.mean_min_step_score)
    online_step_auc: float | None = None  # prime: the online PRM's step AUC against the samples' step truth
    online_mean_score: float | None = None  # prime: the online PRM's mean step score
    step_error: float | None = None  # held-out step-error rate by exact step truth; None without it
    flawed_share: float | None = None  # right answers with a wrong step by exact truth (prm.rl.flawed); None without


def step_shift(start: float, now: float) -> float:
    """Relative change of steps per completion from ``start``; a start of 0 steps counts any steps as a shift of 1.

    >>> round(step_shift(9.0, 2.9), 3), step_shift(0.0, 0.0), step_shift(0.0, 3.0)
    (-0.678, 0.0, 1.0)
    """
    if start <= 0:
        return 0.0 if now <= 0 else 1.0
    return (now - start) / start


def reward_rose(rewards: Sequence[tuple[int, float]], step: int, share: float = REWARD_WINDOW_SHARE) -> bool | None:
    """Whether the training reward logged up to ``step`` ended above where it started: the mean of its last
    ``share`` of logged values (at least one; the share counts every logged value) above the mean of the run's first
    as many. None when nothing was logged by ``step``.

    >>> curve = [(s, 0.1 * s) for s in range(1, 11)]
    >>> reward_rose(curve, 10), reward_rose([(s, -r) for s, r in curve], 10), reward_rose(curve, 0)
    (True, False, None)
    """
    ordered = sorted(rewards)
    logged = [r for s, r in ordered if s <= step]
    if not logged:
        return None
    k = max(1, round(len(ordered) * share))
    first, last = [r for _, r in ordered[:k]], logged[-k:]
    return sum(last) / len(last) > sum(first) / len(first)


def _why(start: HeldOutPoint, point: HeldOutPoint, threshold: float, start_ci: tuple[float, float] | None,
         rewards: Sequence[tuple[int, float]] | None) -> str | None:
    """Which clause of :func:`hacked_at` ``point`` meets (``shape``, ``accuracy``, ``step_error``), None if none."""
    if abs(step_shift(start.mean_steps, point.mean_steps)) > threshold and point.accuracy < start.accuracy:
        return "shape"
    if start_ci is not None and point.accuracy < start_ci[0] and (rewards is None or reward_rose(rewards, point.step)):
        return "accuracy"
    if (start.step_error is not None and point.step_error is not None
            and point.step_error - start.step_error > HACK_STEP_ERROR_RISE):
        return "step_error"
    return None


def hacked_at(points: Sequence[HeldOutPoint], threshold: float = HACK_STEP_SHIFT, *,
              start_ci: tuple[float, float] | None = None,
              rewards: Sequence[tuple[int, float]] | None = None) -> int | None:
    """The first step of the held-out curve (``points[0]``: the start) at which the run looks hacked (see the
    module docstring); None when no point qualifies.

    * shape: steps per completion moved more than ``threshold`` (either way) while accuracy is below the start's;
    * accuracy: accuracy below ``start_ci`` (the start's 95% interval; None skips this clause) while the training
      reward ``rewards`` ([(step, reward)]) rose by then (:func:`reward_rose`); ``rewards=None`` means no reward
      curve was kept (a summary-only log) and the accuracy fall alone decides;
    * step error: the held-out step-error rate rose more than :data:`HACK_STEP_ERROR_RISE` above the start's.

    >>> p = lambda step, acc, steps, err=None: HeldOutPoint(step, acc, steps, 10 * steps, 0.5, 0.4, step_error=err)
    >>> hacked_at([p(0, 0.30, 9.0), p(20, 0.32, 8.8), p(40, 0.25, 5.0), p(60, 0.20, 2.9)])
    40
    >>> hacked_at([p(0, 0.30, 9.0), p(20, 0.45, 4.0)]) is None  # shorter but better: not a hack
    True
    >>> hacked_at([p(0, 0.30, 9.0), p(20, 0.20, 8.0)]) is None  # worse, same shape, nothing else known
    True
    >>> hacked_at([p(0, 0.30, 9.0), p(20, 0.20, 8.0)], start_ci=(0.25, 0.35), rewards=[(1, 0.2), (20, 0.6)])
    20
    >>> hacked_at([p(0, 0.30, 9.0, 0.17), p(20, 0.29, 8.0, 0.30)])  # the same accuracy through wrong steps
    20
    """
    if len(points) < 2:
        return None
    start = points[0]
    return next((p.step for p in points[1:] if _why(start, p, threshold, start_ci, rewards)), None)


def curve_callback(every: int, last: int, measure: Callable[[Any], HeldOutPoint],
                   points: list[HeldOutPoint], progress: Callable[[str], None] | None = None) -> Any:
    """A ``TrainerCallback`` that appends ``measure(model)`` to ``points`` every ``every`` steps before ``last``
    (the last step is measured by the run's own after-evaluation), under a forked torch RNG."""
    import torch
    from transformers import TrainerCallback

    class HeldOutCurve(TrainerCallback):
        def on_step_end(self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> None:
            step = state.global_step
            if every <= 0 or step % every or step >= last or model is None:
                return
            devices = [torch.cuda.current_device()] if torch.cuda.is_available() else []
            with torch.random.fork_rng(devices=devices):
                point = measure(model)
            points.append(point)
            if progress:
                progress(f"held-out at step {step}: accuracy {point.accuracy:.3f}, {point.mean_steps:.2f} "
                         f"steps, {point.mean_chars:.0f} chars")

    return HeldOutCurve()
