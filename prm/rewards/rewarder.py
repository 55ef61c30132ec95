"""A PRM plus a reward definition: completions in, one shaped reward each out. Every adapter (TRL, verl,
OpenRLHF) and the reward server go through :class:`Rewarder`, so they all compute the same reward.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prm.rewards.config import RewardConfig
from prm.rewards.outcome import outcome_rewards
from prm.rewards.shaping import ShapedReward, reward_for
from prm.rewards.steps import StepRewards, step_rewards_batch, strip_padding

if TYPE_CHECKING:
    from prm.scoring import Scorer, ScorerConfig

logger = logging.getLogger(__name__)
# Why a completion whose problem is None was not scored: the PRM is conditioned on the question, and scoring the
# steps under a wrong or empty one reads every step as off-policy (the process reward silently near 0).
NO_PROBLEM = ("the question was not found (no extra_info question, a prompt that is not in the query, or an empty "
              "prompt); given the reward of a completion with no steps")


class Unconditioned:
    """Completions given the no-step reward because their question was not found, counted for a server's
    ``/health``; the first one in a process is a warning, later ones are debug lines."""

    def __init__(self) -> None:
        self.count, self._lock = 0, threading.Lock()

    def add(self, n: int) -> None:
        if n <= 0:
            return
        with self._lock:
            first, self.count = self.count == 0, self.count + n
        (logger.warning if first else logger.debug)(
            "%d completion(s) not scored by the PRM: %s. Pass the raw question (verl: extra_info['question'] or "
            "the prm_dense manager; OpenRLHF: the prompts as rendered, from the same tokenizer)", n, NO_PROBLEM)


UNCONDITIONED = Unconditioned()


@dataclass(frozen=True)
class ScoredCompletion:
    """A completion's reward and the per-step scores (with spans) it was shaped from."""

    shaped: ShapedReward
    steps: StepRewards
    error: str | None = None  # why the PRM did not score it (NO_PROBLEM), None when it did or found no step

    @property
    def reward(self) -> float:
        return self.shaped.reward

    def extras(self) -> dict[str, float]:
        """The shaped reward's numbers for a framework's logs, and ``reward_error`` (1: the PRM did not score it)."""
        return {**self.shaped.extras(), "reward_error": float(self.error is not None)}


class Rewarder:
    """Scores completions with a loaded PRM and shapes them under one :class:`RewardConfig`.

    >>> class Half:  # stands in for a PRMScorer: every step scores 0.5
    ...     def score_batch(self, items, batch_size=None):
    ...         return [[0.5] * len(steps) for _, steps in items]
    >>> rewarder = Rewarder(Half(), RewardConfig(shaping="min", outcome_weight=0.5))
    >>> [s.reward for s in rewarder.score(["1+1"] * 2, ["1+1 = 2\\nAnswer: 2</s>", "1+1 = 3\\nAnswer: 3"], ["2", "2"])]
    [0.75, 0.25]
    """

    def __init__(self, scorer: Scorer, config: RewardConfig | None = None, batch_size: int | None = None) -> None:
        self.scorer, self.config, self.batch_size = scorer, config or RewardConfig(), batch_size

    def score(self, problems: Sequence[str | None], completions: Sequence[str],
              golds: Sequence[str | None] | None = None,
              truncated: Sequence[bool] | None = None) -> list[ScoredCompletion]:
        """One :class:`ScoredCompletion` per completion, in order.

        ``problems``: the problem text each completion answers (what the PRM is conditioned on); None where
        it could not be found: that completion gets the no-step reward (its outcome still graded), ``error``
        says why, and :data:`UNCONDITIONED` counts it.
        ``golds``: gold final answers (None, or None entries: no outcome reward, allowed only for a PRM-only
        config). ``truncated``: completions cut off by the generation length limit (outcome 0).
        """
        if len(problems) != len(completions):
            raise ValueError(f"{len(completions)} completions need as many problems, got {len(problems)}")
        missing = [p is None for p in problems]
        UNCONDITIONED.add(sum(missing))
        steps = step_rewards_batch(self.scorer, [("", "") if p is None else (p, c)
                                                 for p, c in zip(problems, completions, strict=True)],
                                   self.config.pad_texts, self.batch_size)
        windows = [strip_padding(c, self.config.pad_texts) for c in completions]
        texts = [c[s:e] for c, (s, e) in zip(completions, windows, strict=True)]
        outcomes = outcome_rewards(texts, list(golds) if golds is not None else [None] * len(texts), truncated)
        return [ScoredCompletion(reward_for(self.config, r.scores, o, r.off_policy), r, NO_PROBLEM if miss else None)
                for r, o, miss in zip(steps, outcomes, missing, strict=True)]


_SCORERS: dict[tuple[str, Any], Scorer] = {}
_LOCK = threading.Lock()


def cached_scorer(prm_dir: str | Path, scorer_config: ScorerConfig | None = None) -> Scorer:
    """The scorer of ``prm_dir`` (a folder or a shipped PRM's name, as ``load_prm`` takes), loaded once per
    process and config.

    File-style adapters (verl's ``compute_score``, OpenRLHF's ``reward_func``) are called once per sample
    or batch with no place to keep state, so the model is kept here. Thread-safe: concurrent first calls
    load it once.
    """
    from prm.scoring import ScorerConfig, load_prm

    config = scorer_config or ScorerConfig()
    key = (str(Path(prm_dir).resolve()), config)
    with _LOCK:
        if key not in _SCORERS:
            _SCORERS[key] = load_prm(prm_dir, config)
        return _SCORERS[key]


def load_rewarder(prm_dir: str | Path, config: RewardConfig | None = None,
                  scorer_config: ScorerConfig | None = None) -> Rewarder:
    """A :class:`Rewarder` over the PRM in ``prm_dir`` (loaded once per process, see :func:`cached_scorer`)."""
    return Rewarder(cached_scorer(prm_dir, scorer_config), config)
