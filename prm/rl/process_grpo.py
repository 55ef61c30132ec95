"""Process-supervised GRPO on TRL: a ``GRPOTrainer`` whose advantages are per token (DeepSeekMath).

The arm's reward function is the TRL adapter of :mod:`prm.rewards` over a :class:`RecordingRewarder`: it
returns the outcome reward (so TRL's own group advantage is the outcome advantage) and keeps the per-step
PRM scores and spans it computed on the way, so the PRM scores each completion once. The trainer then
replaces TRL's ``(B,)`` advantages with ``(B, T)`` ones::

    A[i, t] = (1 - w) * process[i, t] + w * outcome[i]

where ``process`` is :func:`prm.rl.process_advantages.token_advantages` of the group's per-step rewards and
``w`` is :attr:`ProcessConfig.outcome_weight`. The per-step rewards are :attr:`ProcessConfig.credit`'s:
DeepSeekMath's group-normalised step scores (the default), PURE's soft min-form credit with a per-token
baseline, or Clip-Delta (:mod:`prm.rl.credit`; the last two do not pay for writing fewer, longer steps).

Pinned to TRL 1.16 (:data:`prm.rl.constants.PROCESS_TRL_VERSION`); what it relies on, asserted by
``tests/prm/rl/test_process_trl_pin.py``:

* ``GRPOTrainer._generate_and_score_completions(self, inputs)`` returns a dict with ``completion_ids``
  ``(B, T)``, ``completion_mask`` ``(B, T)`` and ``advantages`` ``(B,)``, this process's rows only, in the
  order the reward functions saw them;
* ``GRPOTrainer._compute_loss`` unsqueezes ``advantages`` only when it is 1-D, so a ``(B, T)`` tensor is
  used per token (TRL's comment there invites subclasses to do this);
* completions are decoded with ``batch_decode(ids, skip_special_tokens=True)`` before the reward call.

TRL is imported when the class is first built (:func:`process_trainer_class`), not with this module.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import torch

from prm.rewards import (
    DEFAULT_ETA,
    DEFAULT_TEMPERATURE,
    RewardConfig,
    Rewarder,
    ScoredCompletion,
    step_end_tokens,
    token_char_ends,
)
from prm.rl.constants import DEFAULT_PROCESS_OUTCOME_WEIGHT
from prm.rl.credit import CREDITS, clip_delta_step_rewards, pure_step_rewards, step_lengths
from prm.rl.process_advantages import (
    normalise_group,
    step_scores,
    token_advantages,
)
from prm.rl.verified_arms import FIRST_ERROR_THRESHOLD, first_error_step_rewards, progrs_bonus
from prm.settings import check_range

logger = logging.getLogger(__name__)


def checked_batch(output: dict[str, Any], scored: int, arm: str,
                  keys: tuple[str, ...] = ("completion_ids", "completion_mask", "advantages")) -> tuple[Any, Any]:
    """``(completion_ids, completion_mask)`` of TRL's scored batch, after checking it holds ``keys`` and 1-D
    advantages (the layout this arm is pinned to) and that the recorder saw ``scored`` = one per completion."""
    missing = set(keys) - set(output)
    if missing or output["advantages"].dim() != 1:
        raise RuntimeError(f"TRL's _generate_and_score_completions changed (missing {sorted(missing)} or "
                           f"advantages not 1-D); the {arm} arm is pinned to TRL 1.16")
    ids, mask = output["completion_ids"], output["completion_mask"]
    if scored != ids.shape[0]:
        raise RuntimeError(f"the reward function scored {scored} completions for a batch of {ids.shape[0]}; the "
                           f"{arm} arm needs its recorder behind the reward")
    return ids, mask


@dataclass(frozen=True)
class ProcessConfig:
    """How the process arm mixes its advantages.

    >>> ProcessConfig(outcome_weight=1.5)
    Traceback (most recent call last):
    ...
    ValueError: outcome_weight=1.5 must be in [0, 1] (the advantage is (1 - w) * process + w * outcome)
    >>> ProcessConfig(credit="sum")
    Traceback (most recent call last):
    ...
    ValueError: credit='sum' must be one of ('deepseek', 'pure', 'clip_delta', 'first_error', 'progrs')
    """

    # Weight of the outcome reward's GRPO advantage in the mix; 0 is DeepSeekMath's pure process supervision.
    outcome_weight: float = DEFAULT_PROCESS_OUTCOME_WEIGHT
    # Per-step rewards (prm.rl.credit): "deepseek" (group-normalised scores, summed per token: fewer steps pay),
    # "pure" (PURE's soft min-form credit, per-token baseline) or "clip_delta" (Gao et al.'s Clip-Delta).
    credit: str = "deepseek"
    temperature: float = DEFAULT_TEMPERATURE  # pure: weights softmax(-r / T); PURE's T = 0.1
    eta: float = DEFAULT_ETA  # clip_delta: a step costs min(r - eta, 0)
    # first_error (VPPO): a step scored below this is the PRM's first error; the PRM's own wrong-step threshold
    threshold: float = FIRST_ERROR_THRESHOLD

    def __post_init__(self) -> None:
        check_range("outcome_weight", self.outcome_weight, low=0.0, high=1.0,
                    why="the advantage is (1 - w) * process + w * outcome")
        if self.credit not in CREDITS:
            raise ValueError(f"credit={self.credit!r} must be one of {CREDITS}")
        # The same soft min (temperature) and Clip threshold (eta) as a reward's: RewardConfig owns their bounds.
        RewardConfig(shaping="soft_min", temperature=self.temperature, eta=self.eta)
        check_range("threshold", self.threshold, low=0.0, high=1.0, why="a P(good) below which a step is an error")

    def key(self) -> dict[str, Any]:
        """The fields a result depends on, for :func:`prm.rl.grpo.run_key`: the credit fields only where they
        differ from DeepSeekMath's default, so results of the default process arm keep their key.

        >>> ProcessConfig().key(), ProcessConfig(credit="pure").key()["credit"]
        ({'outcome_weight': 0.5}, 'pure')
        """
        default = ProcessConfig(outcome_weight=self.outcome_weight)
        return {k: v for k, v in asdict(self).items() if k == "outcome_weight" or v != getattr(default, k)}


class RecordingRewarder(Rewarder):
    """A :class:`Rewarder` that keeps the completions and :class:`ScoredCompletion` of its latest call."""

    def __init__(self, rewarder: Rewarder) -> None:
        super().__init__(rewarder.scorer, rewarder.config, rewarder.batch_size)
        self.texts: list[str] = []
        self.scored: list[ScoredCompletion] = []

    def score(self, problems: Sequence[str], completions: Sequence[str], golds: Sequence[str | None] | None = None,
              truncated: Sequence[bool] | None = None) -> list[ScoredCompletion]:
        scored = super().score(problems, completions, golds, truncated)
        self.texts, self.scored = list(completions), scored
        return scored


def completion_step_scores(tokenizer: Any, ids: Sequence[int], text: str,
                           scored: ScoredCompletion | None) -> tuple[list[float], list[int | None]]:
    """A completion's step scores (NaN where missing) and each step's end token in ``ids``. No steps when the
    text the PRM scored is not the text ``ids`` decode to (a conversational or tool-calling completion whose
    content differs): that completion keeps its outcome advantage only, with a warning."""
    if scored is None:
        return [], []
    char_ends = token_char_ends(tokenizer, ids)
    decoded = tokenizer.decode(list(ids), skip_special_tokens=True)
    if decoded != text:
        logger.warning("process arm: the scored completion is not the decoded token ids (%d vs %d characters); "
                       "its advantage is the outcome part only", len(text), len(decoded))
        return [], []
    spans = scored.steps.spans
    return step_scores(scored.steps.scores, len(spans)), step_end_tokens(char_ends, spans)


def group_step_rewards(scores: Sequence[Sequence[float]], end_tokens: Sequence[Sequence[int | None]],
                       process: ProcessConfig) -> list[list[float]]:
    """One group's per-step rewards under ``process.credit`` (see :mod:`prm.rl.credit`).

    >>> group_step_rewards([[1.0], [0.0]], [[0], [1]], ProcessConfig())
    [[1.0], [-1.0]]
    """
    if process.credit == "pure":
        return pure_step_rewards(scores, [step_lengths(e) for e in end_tokens], process.temperature)
    if process.credit == "clip_delta":
        return clip_delta_step_rewards(scores, process.eta)
    if process.credit == "first_error":
        return first_error_step_rewards(scores, end_tokens, process.threshold)
    if process.credit == "progrs":  # no per-step part: a per-completion bonus (process_advantage_matrix)
        return [[0.0] * len(row) for row in scores]
    return normalise_group(scores)


def process_advantage_matrix(scores: Sequence[Sequence[float]], end_tokens: Sequence[Sequence[int | None]],
                             lengths: Sequence[int], num_generations: int, width: int,
                             process: ProcessConfig | None = None,
                             graded: Sequence[tuple[float | None, float]] | None = None) -> torch.Tensor:
    """``(B, width)`` process advantages of a batch whose consecutive runs of ``num_generations`` rows are
    groups (TRL's order): each group's per-step rewards (:func:`group_step_rewards`; by default step scores
    normalised per group), then summed from each token onward. ``progrs``: each completion's
    :func:`~prm.rl.verified_arms.progrs_bonus` on every one of its tokens, from ``graded`` = (outcome, PRM score)
    per completion.

    >>> process_advantage_matrix([[1.0], [0.0]], [[0], [1]], [2, 2], 2, 3).tolist()
    [[1.0, 0.0, 0.0], [-1.0, -1.0, 0.0]]
    >>> process_advantage_matrix([[], []], [[], []], [2, 1], 2, 3, ProcessConfig(credit="progrs"),
    ...                          [(0.0, 0.75), (0.0, 0.25)]).tolist()
    [[0.25, 0.25, 0.0], [-0.25, 0.0, 0.0]]
    """
    if len(scores) % num_generations:
        raise ValueError(f"{len(scores)} completions do not split into groups of {num_generations}")
    process = process or ProcessConfig()
    out = torch.zeros(len(scores), width, dtype=torch.float32)
    if process.credit == "progrs":
        if graded is None or len(graded) != len(scores):
            raise ValueError("the progrs credit needs (outcome, PRM score) of every completion (graded=)")
        for g in range(0, len(scores), num_generations):
            group = graded[g:g + num_generations]
            bonus = progrs_bonus([o for o, _ in group], [p for _, p in group])
            for i, b in zip(range(g, g + num_generations), bonus, strict=True):
                out[i, : min(lengths[i], width)] = b
        return out
    for g in range(0, len(scores), num_generations):
        rewards = group_step_rewards(scores[g:g + num_generations], end_tokens[g:g + num_generations], process)
        for i in range(g, g + num_generations):
            row = token_advantages(rewards[i - g], end_tokens[i], min(lengths[i], width))
            out[i, : len(row)] = torch.tensor(row, dtype=torch.float32)
    return out


def mix_advantages(process: torch.Tensor, outcome: torch.Tensor, config: ProcessConfig) -> torch.Tensor:
    """Per-token advantages from the ``(B, T)`` process part and the ``(B,)`` outcome advantage:
    ``(1 - w) * process + w * outcome``, or for ``progrs`` the outcome advantage plus its bonus, unweighted (so a
    wrong answer never overtakes a right one).

    >>> mix_advantages(torch.tensor([[1.0, 0.0]]), torch.tensor([2.0]), ProcessConfig()).tolist()
    [[1.5, 1.0]]
    >>> mix_advantages(torch.tensor([[0.5, 0.0]]), torch.tensor([-1.0]), ProcessConfig(credit="progrs")).tolist()
    [[-0.5, -1.0]]
    """
    if config.credit == "progrs":
        return outcome.unsqueeze(1) + process
    w = config.outcome_weight
    return (1.0 - w) * process + w * outcome.unsqueeze(1)


@functools.cache
def process_trainer_class() -> type:
    """``ProcessGRPOTrainer``: TRL's ``GRPOTrainer`` with DeepSeekMath's per-token process advantages.

    Construct it as a ``GRPOTrainer`` plus ``recorder=`` (the :class:`RecordingRewarder` behind its one reward
    function) and ``process=`` (:class:`ProcessConfig`).
    """
    from accelerate.utils import gather_object
    from trl import GRPOTrainer

    class ProcessGRPOTrainer(GRPOTrainer):
        def __init__(self, *args: Any, recorder: RecordingRewarder, process: ProcessConfig | None = None,
                     **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            if len(self.reward_funcs) != 1:
                raise ValueError(f"the process arm takes one reward function (the outcome reward whose rewarder "
                                 f"records step scores), got {len(self.reward_funcs)}")
            self.recorder, self.process = recorder, process or ProcessConfig()

        def _generate_and_score_completions(self, inputs: list[dict[str, Any]]) -> dict[str, Any]:
            output = super()._generate_and_score_completions(inputs)
            ids, mask = checked_batch(output, len(self.recorder.scored), "process")
            lengths = mask.sum(dim=1).tolist()
            rows = [completion_step_scores(self.processing_class, ids[i, : int(n)].tolist(), text, scored)
                    for i, (n, text, scored) in enumerate(zip(lengths, self.recorder.texts, self.recorder.scored,
                                                              strict=True))]
            # Groups can straddle processes: normalise over every process's rows, keep this process's.
            graded = [(s.shaped.outcome, s.shaped.process) for s in self.recorder.scored]
            every = gather_object([(s, e, int(n), g) for (s, e), n, g in zip(rows, lengths, graded, strict=True)])
            mode = "train" if self.model.training else "eval"
            groups = self.num_generations if mode == "train" else self.num_generations_eval
            process = process_advantage_matrix([r[0] for r in every], [r[1] for r in every], [r[2] for r in every],
                                               groups, ids.shape[1], self.process, [r[3] for r in every])
            start = self.accelerator.process_index * ids.shape[0]
            process = process[start:start + ids.shape[0]].to(ids.device)
            output["advantages"] = mix_advantages(process, output["advantages"], self.process)
            # Logged under their own prefix: the reward function, named after the arm, logs "<arm>/<key>".
            n_steps = [len(s) for s, _ in rows]
            self._metrics[mode]["token_advantage/steps_per_completion"].append(sum(n_steps) / max(len(n_steps), 1))
            self._metrics[mode]["token_advantage/mean_abs"].append(
                float((process.abs() * mask).sum() / mask.sum().clamp(min=1)))
            return output

    return ProcessGRPOTrainer
