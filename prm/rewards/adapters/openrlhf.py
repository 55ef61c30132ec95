"""A PRM reward for OpenRLHF: ``reward_func`` for ``--remote_rm_url /path/to/this/file.py``, and
:func:`remote_payload`, the same result as JSON for a reward server speaking OpenRLHF's HTTP protocol.

OpenRLHF loads a ``.py`` remote_rm_url by file path and calls ``reward_func(queries, prompts, labels)``
(openrlhf/utils/agent.py and the experience makers; examples/python/reward_func.py): ``queries`` are prompt +
response decoded with ``skip_special_tokens=False`` (so special tokens such as ``<|im_end|>`` can trail the
response), ``prompts`` the rendered prompts, ``labels`` the ``--label_key`` column. It expects
``{"rewards": tensor, "scores": tensor, "extra_logs": {name: tensor}}``: ``rewards`` feed the advantages,
``scores`` (0-1) the dynamic filtering, ``extra_logs`` wandb. Its HTTP client POSTs
``{"query": [...], "prompts": [...], "labels": [...]}`` and reads the same keys from the JSON reply.

Per step: OpenRLHF's protocol carries one reward per sample (its PPO puts it on the response's last token), and
``extra_logs`` values must be one number per sample, so step scores cannot ride there. With ``per_step=True``
(:func:`remote_payload`) or ``PRM_REWARD_STEPS=1`` (``reward_func``) the result also holds ``step_rewards`` (each
sample's P(good) per step, NO_STEP_SCORE past the PRM's context) and ``step_spans`` (``[start, end)`` of each step
in the response text): OpenRLHF ignores them, a customised experience maker can place them per token.

OpenRLHF catches a failing reward call and drops the sample without a word, so nothing here raises on model
text; the PRM folder comes from the ``PRM_REWARD_MODEL`` environment variable (and the shaping from
``PRM_REWARD_SHAPING``), as OpenRLHF passes nothing else. Run with::

    PRM_REWARD_MODEL=/models/prm-omegaprm python -m openrlhf.cli.train_ppo_ray ... \\
        --remote_rm_url $(python -c "import prm.rewards.adapters.openrlhf as m; print(m.__file__)") \\
        --label_key answer
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Sequence
from typing import Any

from prm.rewards.adapters.chat_template import ChatMarkers, assistant_reply, user_message
from prm.rewards.adapters.messages import label_answer, problem_text
from prm.rewards.config import RewardConfig
from prm.rewards.constants import PRM_DIR_ENV, SHAPING_ENV, STEPS_ENV
from prm.rewards.rewarder import Rewarder, load_rewarder

logger = logging.getLogger(__name__)


def split_query(query: str, prompt: str, markers: tuple[ChatMarkers, ...] = ()) -> str | None:
    """The response part of ``query`` (prompt + response): what follows the prompt's first occurrence (a
    response that repeats the question stays whole); when the prompt is not in it (a tokenizer that does not
    round-trip the prompt's text), what follows the last assistant header of a chat-templated query; else None
    (the response cannot be told from the question).

    >>> split_query("<s>12+7 =\\n12+7 = 19\\nAnswer: 19</s>", "12+7 =\\n")
    '12+7 = 19\\nAnswer: 19</s>'
    >>> split_query("<|im_start|>user\\n12+7 =<|im_end|>\\n<|im_start|>assistant\\n12+7 = 19", "12 + 7 =")
    '12+7 = 19'
    >>> split_query("12+7 = 19", "") is None
    True
    """
    at = query.find(prompt) if prompt else -1
    return query[at + len(prompt):] if at >= 0 else assistant_reply(query, markers)


def remote_payload(rewarder: Rewarder, queries: Sequence[str], prompts: Sequence[str],
                   labels: Sequence[Any] | None, per_step: bool = False,
                   markers: tuple[ChatMarkers, ...] = ()) -> dict[str, Any]:
    """OpenRLHF's reward result as plain lists (JSON-ready): ``rewards``, ``scores`` (the outcome, 0 or 1,
    for dynamic filtering; the reward clipped to [0, 1] when there is no label) and per-sample
    ``extra_logs``, ``reward_error`` among them; with ``per_step``, also ``step_rewards`` and ``step_spans`` (see
    the module docstring).

    Prompts rendered through a chat template (``--apply_chat_template``) are read back to the question
    (``markers``, then the common families). A sample whose question or response cannot be found, or whose label
    is unusable (a list of several answers, a dict without an answer key), is still answered: the no-step reward
    or a wrong outcome, with ``reward_error`` 1 and the reason logged. A missing label counts as a wrong answer
    when the config needs an outcome (warned)."""
    config = rewarder.config
    parsed = [label_answer(label) for label in (labels if labels is not None else [None] * len(queries))]
    golds = [gold for gold, _ in parsed]
    errors = [why for _, why in parsed]
    for why in {w for w in errors if w}:
        logger.warning("unusable label: %s (its outcome reward is 0)", why)
    if None in golds and (config.outcome_weight > 0 or config.prof_filter):
        logger.warning("%d of %d samples have no label: their outcome reward is 0; pass --label_key with the gold "
                       "answers, or use a PRM-only reward (outcome_weight=0)", golds.count(None), len(golds))
        golds = ["" if g is None else g for g in golds]  # an empty gold grades as unverifiable: outcome 0
    responses = [split_query(q, p, markers) for q, p in zip(queries, prompts, strict=True)]
    problems = [None if r is None else (problem_text(p, markers) if p else user_message(q, markers)) or None
                for q, p, r in zip(queries, prompts, responses, strict=True)]
    scored = rewarder.score(problems, [q if r is None else r for q, r in zip(queries, responses, strict=True)],
                            golds)
    extras = [{**s.extras(), "reward_error": float(s.error is not None or e is not None)}
              for s, e in zip(scored, errors, strict=True)]
    payload = {
        "rewards": [s.reward for s in scored],
        "scores": [s.shaped.outcome if s.shaped.outcome is not None else min(max(s.reward, 0.0), 1.0)
                   for s in scored],
        "extra_logs": {key: [e[key] for e in extras] for key in (extras[0] if extras else {})},
    }
    if per_step:  # NaN (none from our PRMs) would break strict JSON: written as None
        payload["step_rewards"] = [[x if math.isfinite(x) else None for x in s.steps.scores] for s in scored]
        payload["step_spans"] = [[list(span) for span in s.steps.spans] for s in scored]
    return payload


def _rewarder() -> Rewarder:
    prm_dir = os.environ.get(PRM_DIR_ENV)
    if not prm_dir:
        raise ValueError(f"no PRM folder: export {PRM_DIR_ENV}=/path/to/prm before launching OpenRLHF")
    return load_rewarder(prm_dir, RewardConfig(shaping=os.environ.get(SHAPING_ENV, RewardConfig.shaping)))


def reward_func(queries: Sequence[str], prompts: Sequence[str], labels: Sequence[Any] | None = None,
                **kwargs: Any) -> dict[str, Any]:
    """OpenRLHF's file-style reward: ``{"rewards", "scores", "extra_logs"}`` as float tensors; with
    ``PRM_REWARD_STEPS=1`` also ``step_rewards`` (one tensor per sample) and ``step_spans``."""
    import torch

    per_step = os.environ.get(STEPS_ENV, "") == "1"
    payload = remote_payload(_rewarder(), queries, prompts, labels, per_step=per_step)
    result: dict[str, Any] = {
        "rewards": torch.tensor(payload["rewards"], dtype=torch.float32),
        "scores": torch.tensor(payload["scores"], dtype=torch.float32),
        "extra_logs": {k: torch.tensor(v, dtype=torch.float32) for k, v in payload["extra_logs"].items()},
    }
    if per_step:
        result["step_rewards"] = [torch.tensor([math.nan if x is None else x for x in row], dtype=torch.float32)
                                  for row in payload["step_rewards"]]
        result["step_spans"] = payload["step_spans"]
    return result
