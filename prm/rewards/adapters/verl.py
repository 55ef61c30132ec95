"""A PRM reward for verl: ``compute_score`` for the naive reward manager, ``compute_score_batch`` for the
batch one. Loaded by file path: absolute imports only, nothing of verl imported.

verl calls a custom reward function as ``fn(data_source=..., solution_str=..., ground_truth=...,
extra_info=..., **reward_kwargs)`` per response (``NaiveRewardManager``), or as ``fn(data_sources=...,
solution_strs=..., ground_truths=..., extra_infos=..., **reward_kwargs)`` per batch
(``reward_manager=batch``); ``solution_str`` is the decoded response only. A dict result must hold
``score`` (the reward, placed on the response's last token); every other key is collected into
``reward_extra_info`` and averaged into the logs, so every key here is present on every call with a number.

The PRM is conditioned on the problem, which verl does not pass to ``compute_score``: it is read from
``extra_info["question"]`` (what verl's GSM8K preprocessing stores), else ``extra_info["problem"]``, else
``extra_info["prompt"]`` (a string, rendered or not, or chat messages); name another key with ``problem_key``.
verl's own MATH preprocessing (v0.7: ``extra_info = {"split", "index"}``) stores none of them: such a response
gets the no-step reward with ``reward_error`` 1 (a warning on the first), never a silent outcome-only reward.
Use the ``prm_dense`` manager (:mod:`prm.rewards.adapters.verl_dense`), which reads the question from the
prompt itself, or add ``question`` to ``extra_info`` in preprocessing.

Config block (top level in verl v0.4-v0.7, ``verl/trainer/config/ppo_trainer.yaml``)::

    custom_reward_function:
      # the file's path: python -c "import prm.rewards.adapters.verl as m; print(m.__file__)"
      path: /path/to/site-packages/prm/rewards/adapters/verl.py
      name: compute_score            # or compute_score_batch with reward_model.reward_manager: batch
      reward_kwargs:                 # passed to every call; any RewardConfig field
        prm_dir: /models/prm-omegaprm  # or export PRM_REWARD_MODEL=/models/prm-omegaprm
        shaping: min
        outcome_weight: 0.5
        prof_filter: false

or on the command line: ``custom_reward_function.path=$(python -c ...) custom_reward_function.name=compute_score``
``+custom_reward_function.reward_kwargs.prm_dir=...``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from prm.rewards.adapters.messages import label_answer, problem_text
from prm.rewards.config import RewardConfig
from prm.rewards.constants import PRM_DIR_ENV, SHAPING_ENV
from prm.rewards.rewarder import Rewarder, load_rewarder

PROBLEM_KEYS = ("question", "problem", "prompt")  # extra_info keys tried in order when problem_key is not set


def _rewarder(kwargs: Mapping[str, Any]) -> Rewarder:
    prm_dir = kwargs.get("prm_dir") or os.environ.get(PRM_DIR_ENV)
    if not prm_dir:
        raise ValueError(f"no PRM folder: set reward_kwargs.prm_dir in verl's custom_reward_function block, or "
                         f"export {PRM_DIR_ENV}=/path/to/prm")
    base = RewardConfig(shaping=os.environ.get(SHAPING_ENV, RewardConfig.shaping))
    return load_rewarder(prm_dir, base.with_overrides(kwargs))


def _problem(extra_info: Any, problem_key: str | None) -> str | None:
    """The question in ``extra_info``, or None where it holds none (the response is then not PRM-scored)."""
    if not isinstance(extra_info, Mapping):
        return None
    for key in (problem_key,) if problem_key else PROBLEM_KEYS:
        value = extra_info.get(key)
        if value is not None and not isinstance(value, str | bytes):
            return problem_text(list(value)) or None  # chat messages (a list, or a numpy array from parquet)
        if value:
            return problem_text(value) or None
    return None


def _gold(ground_truth: Any) -> str | None:
    """The gold answer of verl's ``ground_truth`` (a string, number, one-element list or answer dict); an unusable
    one grades as no answer (logged by the caller through ``label_answer``'s reason)."""
    return label_answer(ground_truth)[0]


def result_rows(scored: Sequence[Any]) -> list[dict[str, float]]:
    """verl's per-response dicts: ``score``, the shaped reward's parts and ``reward_error`` (1: not PRM-scored)."""
    return [{"score": s.reward, **s.extras()} for s in scored]


def compute_score_batch(data_sources: Sequence[Any], solution_strs: Sequence[str], ground_truths: Sequence[Any],
                        extra_infos: Sequence[Any] | None = None, **kwargs: Any) -> list[dict[str, float]]:
    """One result dict per response, scored in padded PRM batches (``reward_manager: batch``)."""
    rewarder = _rewarder(kwargs)
    infos = list(extra_infos) if extra_infos is not None else [None] * len(solution_strs)
    problems = [_problem(info, kwargs.get("problem_key")) for info in infos]
    scored = rewarder.score(problems, list(solution_strs), [_gold(g) for g in ground_truths])
    return result_rows(scored)


def compute_score(data_source: Any, solution_str: str, ground_truth: Any, extra_info: Any = None,
                  **kwargs: Any) -> dict[str, float]:
    """verl's custom reward: ``{"score": reward, "process_reward", "outcome_reward", "n_steps",
    "min_step_score", "prof_weight", "prof_disagree", "reward_error"}``. ``kwargs``: ``prm_dir``, ``problem_key``
    and any :class:`~prm.rewards.RewardConfig` field (verl's ``reward_kwargs``); other keys are ignored."""
    return compute_score_batch([data_source], [solution_str], [ground_truth], [extra_info], **kwargs)[0]
