"""Dense PRM rewards for verl: each step's reward on the last token of that step, in verl's token-level reward
tensor, through a reward-manager-shaped class. Nothing of verl is imported (verl does not install here).

The layout is verl's ``NaiveRewardManager.__call__`` (``verl/workers/reward_manager/naive.py``, read at commit
0df61dc5 of volcengine/verl, the v0.4-era manager; the lines used are unchanged through v0.4.x):

* ``data.batch["prompts"]`` ``(B, P)``, ``data.batch["responses"]`` ``(B, R)`` and ``data.batch["attention_mask"]``
  ``(B, P + R)``; a response's valid tokens are the ones its ``attention_mask[P:]`` marks (verl right-pads
  responses; left padding is handled the same way here);
* ``reward_tensor = torch.zeros_like(data.batch["responses"], dtype=torch.float32)``; the naive manager puts
  one scalar at ``[i, valid_response_length - 1]``, this one puts several;
* ``__call__(data, return_dict=False)`` returns the tensor, or ``{"reward_tensor": ..., "reward_extra_info":
  {key: [one value per response]}}``; verl stores it as ``token_level_scores``.
* ``data.non_tensor_batch`` holds ``reward_model`` (``{"ground_truth": ...}``), ``data_source`` and
  ``extra_info`` per response.

Wiring: importing this file registers ``prm_dense`` in both of verl's registries (:func:`register_with_verl`); it
also exports ``compute_score`` (the scalar adapter of :mod:`prm.rewards.adapters.verl`), so it can be verl's
``custom_reward_function.path``, which verl imports before it looks the manager up. Up to v0.6 (and in v0.7 with
``reward_model.use_reward_loop: false``) verl builds the manager as ``cls(tokenizer=..., num_examine=...,
compute_score=..., reward_fn_key=..., **reward_model.reward_kwargs)`` and keeps the per-token tensor. verl 0.7's
reward loop (``use_reward_loop: true``, its default; ``verl/experimental/reward_loop``) builds
``cls(config, tokenizer, compute_score, reward_router_address, reward_model_tokenizer)``, calls ``await
run_single(data)`` per response and puts the one ``reward_score`` it returns on the last token:
:class:`PRMRewardLoopManager` answers it with the dense row's sum (the same total), so per-step placement needs
``use_reward_loop: false``; the first call says so in the log.

The question: ``extra_info`` as :mod:`prm.rewards.adapters.verl` reads it; else the row's ``raw_prompt`` (the chat
messages verl keeps); else the prompt tokens decoded and read back through their chat template. A response whose
question is found nowhere gets the no-step reward with ``reward_error`` 1.

``data`` is a verl ``DataProto`` or, in this project's tests, the documented stand-in: a mapping
``{"batch": {name: tensor}, "non_tensor_batch": {name: sequence}}`` (:func:`batch_parts` reads both).

Per response: step ``k`` gets ``(1 - w) * value(score_k)`` on its last token, where ``value`` is Clip's
``min(score - eta, 0)`` (``step_value="clip"``, the default: never positive, so writing more steps never pays,
Gao et al. 2024) or the raw P(good) (``"score"``); the outcome gets ``w * outcome`` on the last valid token,
``w`` being ``RewardConfig.outcome_weight``. NaN or missing scores place nothing. A step whose end falls past
the response (the response was cut at ``max_response_length``, or the spans came from a longer text) is
dropped (``past_end="drop"``, the default: its last token was never generated) or put on the last valid token
(``"clip"``). Steps past the PRM's context carry :data:`~prm.rewards.constants.NO_STEP_SCORE` from
:mod:`prm.rewards.steps`.
"""

from __future__ import annotations

import bisect
import importlib
import logging
import math
import os
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import torch

from prm.rewards.adapters.chat_template import markers_from_tokenizer
from prm.rewards.adapters.messages import problem_text
from prm.rewards.adapters.verl import PROBLEM_KEYS, _gold, _problem, compute_score
from prm.rewards.config import RewardConfig
from prm.rewards.constants import PRM_DIR_ENV
from prm.rewards.rewarder import Rewarder, load_rewarder
from prm.rewards.token_spans import Span, token_char_ends

logger = logging.getLogger(__name__)
STEP_VALUES = ("clip", "score")
PAST_END = ("drop", "clip")
# The name the manager registers under in verl's reward-manager registry (reward_model.reward_manager).
VERL_MANAGER_NAME = "prm_dense"


def step_value(score: float, kind: str, eta: float) -> float:
    """A step's dense reward before the ``1 - w`` weight: Clip's ``min(score - eta, 0)`` or the raw score.

    >>> step_value(0.9, "clip", 0.5), step_value(0.2, "clip", 0.5), step_value(0.2, "score", 0.5)
    (0.0, -0.3, 0.2)
    """
    return min(score - eta, 0.0) if kind == "clip" else score


def dense_rewards(char_ends: Sequence[int], spans: Sequence[Span], rewards: Sequence[float],
                  past_end: str = "drop") -> torch.Tensor:
    """A float tensor of ``len(char_ends)`` (the response's tokens) with ``rewards[k]`` on the token holding
    the last character of ``spans[k]`` and zeros elsewhere; several steps ending in one token add up. A NaN
    reward or an empty span places nothing; a span ending past the decoded text is dropped or, with
    ``past_end="clip"``, put on the last token.

    >>> dense_rewards([1, 2, 3, 4, 5], [(0, 2), (3, 5), (3, 9)], [0.5, -1.0, 2.0]).tolist()
    [0.0, 0.5, 0.0, 0.0, -1.0]
    >>> dense_rewards([1, 2, 3, 4, 5], [(3, 9)], [2.0], past_end="clip").tolist()
    [0.0, 0.0, 0.0, 0.0, 2.0]
    """
    if past_end not in PAST_END:
        raise ValueError(f"past_end={past_end!r} must be one of {PAST_END}")
    out = torch.zeros(len(char_ends), dtype=torch.float32)
    for (start, end), reward in zip(spans, rewards, strict=True):
        if end <= start or not math.isfinite(reward) or not char_ends:
            continue
        i = bisect.bisect_left(char_ends, end)
        if i >= len(char_ends):
            if past_end == "drop":
                continue
            i = len(char_ends) - 1
        out[i] += reward
    return out


def batch_parts(data: Any) -> tuple[Mapping[str, torch.Tensor], Mapping[str, Any]]:
    """``(batch, non_tensor_batch)`` of a verl ``DataProto`` or of the stand-in mapping."""
    if isinstance(data, Mapping):
        return data["batch"], data.get("non_tensor_batch", {})
    return data.batch, data.non_tensor_batch


class PRMDenseRewardManager:
    """verl reward manager: dense PRM step rewards plus the outcome, as ``token_level_scores``.

    ``tokenizer``: the policy's. ``num_examine``, ``compute_score``, ``reward_fn_key``: what verl's
    ``load_reward_manager`` passes every manager (``compute_score`` is unused: the PRM and Math-Verify score).
    ``prm_dir``: the PRM folder (else ``$PRM_REWARD_MODEL``); ``step_value``, ``past_end``, ``problem_key`` and
    any :class:`~prm.rewards.RewardConfig` field (``outcome_weight``, ``eta``) come from verl's ``reward_kwargs``.
    ``rewarder``: an already loaded :class:`~prm.rewards.Rewarder` (tests; it wins over ``prm_dir``).
    """

    def __init__(self, tokenizer: Any, num_examine: int = 0, compute_score: Any = None,
                 reward_fn_key: str = "data_source", *, prm_dir: str | None = None, step_value: str = "clip",
                 past_end: str = "drop", problem_key: str | None = None, rewarder: Rewarder | None = None,
                 **reward_kwargs: Any) -> None:
        if step_value not in STEP_VALUES:
            raise ValueError(f"step_value={step_value!r} must be one of {STEP_VALUES}")
        if past_end not in PAST_END:
            raise ValueError(f"past_end={past_end!r} must be one of {PAST_END}")
        if rewarder is None:
            prm_dir = prm_dir or os.environ.get(PRM_DIR_ENV)
            if not prm_dir:
                raise ValueError(f"no PRM folder: set reward_kwargs.prm_dir in verl's reward_model block, or export "
                                 f"{PRM_DIR_ENV}=/path/to/prm")
            rewarder = load_rewarder(prm_dir, RewardConfig().with_overrides(reward_kwargs))
        self.tokenizer, self.num_examine, self.reward_fn_key = tokenizer, num_examine, reward_fn_key
        self.rewarder, self.step_value, self.past_end, self.problem_key = rewarder, step_value, past_end, problem_key
        found = markers_from_tokenizer(tokenizer)
        self.markers = (found,) if found else ()

    def _question(self, info: Any, raw_prompt: Any, prompt_ids: list[int]) -> str | None:
        """The question from ``extra_info``, else the chat messages verl keeps, else the decoded prompt."""
        problem = _problem(info, self.problem_key)
        if problem is None and raw_prompt is not None and not isinstance(raw_prompt, str | bytes):
            problem = problem_text(list(raw_prompt)) or None  # a list of messages, or a numpy array of them
        if problem is None and prompt_ids:
            rendered = self.tokenizer.decode(prompt_ids, skip_special_tokens=False)
            plain = self.tokenizer.decode(prompt_ids, skip_special_tokens=True)
            problem = (problem_text(rendered, self.markers) if rendered != plain else problem_text(plain)) or None
        return problem

    def __call__(self, data: Any, return_dict: bool = False) -> torch.Tensor | dict[str, Any]:
        batch, extra = batch_parts(data)
        responses = batch["responses"]
        prompt_length = batch["prompts"].shape[-1]
        prompt_ids = [batch["prompts"][i][batch["attention_mask"][i, :prompt_length].bool()].tolist()
                      for i in range(responses.shape[0])]
        reward_tensor = torch.zeros_like(responses, dtype=torch.float32)
        positions = [torch.nonzero(batch["attention_mask"][i, prompt_length:], as_tuple=True)[0]
                     for i in range(responses.shape[0])]
        ids = [responses[i, pos].tolist() for i, pos in enumerate(positions)]
        texts = [self.tokenizer.decode(row, skip_special_tokens=True) for row in ids]
        n = len(texts)
        infos = list(extra.get("extra_info", [None] * n))
        golds = [_gold((rm or {}).get("ground_truth")) for rm in extra.get("reward_model", [None] * n)]
        raws = list(extra.get("raw_prompt", [None] * n))
        problems = [self._question(info, raw, ids) for info, raw, ids in zip(infos, raws, prompt_ids, strict=True)]
        scored = self.rewarder.score(problems, texts, golds)
        config, info = self.rewarder.config, defaultdict(list)
        w = config.outcome_weight
        for i, (pos, s) in enumerate(zip(positions, scored, strict=True)):
            spans = s.steps.spans[: len(s.steps.scores)]  # a completion the PRM did not score places no step
            values = [(1.0 - w) * step_value(x, self.step_value, config.eta) for x in s.steps.scores]
            row = dense_rewards(token_char_ends(self.tokenizer, ids[i]), spans, values, self.past_end)
            if len(pos):  # an empty response has no token to hold a reward: its row stays zero
                row[-1] += w * (s.shaped.outcome if s.shaped.outcome is not None else 0.0)
                reward_tensor[i, pos] = row
            extras = {"score": float(row.sum()), **s.extras()}
            for key, value in extras.items():
                info[key].append(value)
        return {"reward_tensor": reward_tensor, "reward_extra_info": dict(info)} if return_dict else reward_tensor


def _reward_kwargs(config: Any) -> dict[str, Any]:
    """``reward_model.reward_kwargs``, else ``custom_reward_function.reward_kwargs``, of verl's config."""
    for section in ("reward_model", "custom_reward_function"):
        part = config.get(section) if hasattr(config, "get") else None
        kwargs = part.get("reward_kwargs") if part is not None and hasattr(part, "get") else None
        if kwargs:
            return dict(kwargs)
    return {}


class PRMRewardLoopManager:
    """verl >= 0.7's reward-loop form of :class:`PRMDenseRewardManager`: one response per ``run_single``, answered
    with ``{"reward_score": the dense row's sum, "reward_extra_info": {...}}`` (see the module docstring).

    ``config``: verl's whole config (the PRM settings are its ``reward_kwargs``); ``tokenizer``: the policy's.
    ``rewarder`` (tests) wins over the config's ``prm_dir``.
    """

    _told = False  # the first call logs that the reward loop keeps one number per response

    def __init__(self, config: Any, tokenizer: Any, compute_score: Any = None, reward_router_address: Any = None,
                 reward_model_tokenizer: Any = None, *, rewarder: Rewarder | None = None) -> None:
        self.dense = PRMDenseRewardManager(tokenizer, rewarder=rewarder, **_reward_kwargs(config))

    async def run_single(self, data: Any) -> dict[str, Any]:
        out = self.dense(data, return_dict=True)
        info = {key: values[0] for key, values in out["reward_extra_info"].items()}
        if not PRMRewardLoopManager._told:
            PRMRewardLoopManager._told = True
            logger.warning("verl's reward loop places one reward per response on its last token: prm_dense gives it "
                           "the dense rewards' sum; set reward_model.use_reward_loop=false for per-step rewards")
        return {"reward_score": info["score"], "reward_extra_info": info}


def register_with_verl(name: str = VERL_MANAGER_NAME) -> bool:
    """Register :class:`PRMDenseRewardManager` in verl's reward-manager registry (``verl.workers.reward_manager.
    registry``) and :class:`PRMRewardLoopManager` in verl 0.7's reward-loop registry (``verl.experimental.
    reward_loop.reward_manager.registry``, where ``use_reward_loop: true`` looks); each ``register`` refuses a
    second class under one name, so a name already taken is left as it is. False where verl does not import.
    Runs when verl loads this file as its custom reward function."""
    registered = False
    for module, cls in (("verl.workers.reward_manager.registry", PRMDenseRewardManager),
                        ("verl.experimental.reward_loop.reward_manager.registry", PRMRewardLoopManager)):
        try:
            registry = importlib.import_module(module)
        except ImportError:
            continue
        table = getattr(registry, "REWARD_MANAGER_REGISTRY", None)
        if table is None:
            table = getattr(registry, "REWARD_LOOP_MANAGER_REGISTRY", {})
        if name not in table:
            registry.register(name)(cls)
        registered = True
    return registered


register_with_verl()

__all__ = ["PROBLEM_KEYS", "PRMDenseRewardManager", "PRMRewardLoopManager", "batch_parts", "compute_score",
           "dense_rewards", "register_with_verl", "step_value"]
