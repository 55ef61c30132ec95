"""A PRM reward function for TRL's ``GRPOTrainer(reward_funcs=[...])``.

TRL 1.x calls a custom reward function once per generation batch as
``func(prompts=..., completions=..., completion_ids=..., **reward_kwargs)`` (trl/trainer/grpo_trainer.py,
``_calculate_rewards``), where ``reward_kwargs`` holds every dataset column except ``prompt`` (one value
per completion, e.g. ``answer``), plus ``trainer_state``, ``log_extra(column, values)`` and
``log_metric(name, value)``; it expects one float (or None) per completion, and names the reward after the
function's ``__name__`` in its logs (``rewards/<name>/mean``). Prompts and completions are strings, or lists
of message dicts in the conversational format. Nothing here imports trl.

Example::

    from trl import GRPOConfig, GRPOTrainer
    from prm.rewards import RewardConfig
    from prm.rewards.adapters.trl import make_trl_reward

    reward = make_trl_reward("models/prm-omegaprm", RewardConfig(shaping="min", outcome_weight=0.5))
    trainer = GRPOTrainer(model=policy, reward_funcs=[reward], args=GRPOConfig(...), train_dataset=ds)
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

from prm.rewards.adapters.messages import completion_text, problem_text
from prm.rewards.config import RewardConfig
from prm.rewards.rewarder import Rewarder, load_rewarder

RewardFunc = Callable[..., list[float]]


def _column(kwargs: dict[str, Any], key: str | None, n: int) -> list[Any] | None:
    if key is None or key not in kwargs:
        return None
    values = list(kwargs[key])
    if len(values) != n:
        raise ValueError(f"dataset column {key!r} holds {len(values)} values for {n} completions; TRL repeats each "
                         "column once per generation, so pass the reward function TRL's own kwargs unchanged")
    return values


def reward_function(rewarder: Rewarder, *, gold_key: str = "answer", problem_key: str | None = "question",
                    eos_token_ids: Collection[int] | None = None, name: str | None = None) -> RewardFunc:
    """A GRPO reward function over an existing :class:`Rewarder` (see :func:`make_trl_reward`)."""
    config = rewarder.config
    stop_ids = set(eos_token_ids or ())

    def reward(prompts: Sequence[Any], completions: Sequence[Any],
               completion_ids: Sequence[Sequence[int]] | None = None, **kwargs: Any) -> list[float]:
        n = len(completions)
        texts = [completion_text(c) for c in completions]
        problems = _column(kwargs, problem_key, n) or [problem_text(p) for p in prompts]
        golds = _column(kwargs, gold_key, n)
        if golds is None and (config.outcome_weight > 0 or config.prof_filter):
            columns = sorted(k for k in kwargs if k not in ("trainer_state", "log_extra", "log_metric", "environments"))
            raise ValueError(f"the outcome reward needs the gold answer in dataset column {gold_key!r}, and the "
                             f"dataset has {columns}; name the column with gold_key=..., or use a PRM-only reward "
                             "(RewardConfig(outcome_weight=0, prof_filter=False))")
        truncated = None
        if stop_ids and completion_ids is not None:  # TRL's own test: the last id is not an EOS or pad id
            truncated = [not ids or ids[-1] not in stop_ids for ids in completion_ids]
        scored = rewarder.score([str(p) for p in problems], texts,
                                [None if g is None else str(g) for g in golds] if golds is not None else None,
                                truncated)
        _log(kwargs, reward.__name__, [s.shaped.extras() for s in scored])
        return [s.reward for s in scored]

    reward.__name__ = reward.__qualname__ = name or f"prm_{config.shaping}"
    return reward


def _log(kwargs: dict[str, Any], name: str, extras: list[dict[str, float]]) -> None:
    """Batch means through TRL's ``log_metric`` and per-completion columns through ``log_extra``, when given."""
    if not extras:
        return
    log_metric, log_extra = kwargs.get("log_metric"), kwargs.get("log_extra")
    for key in extras[0]:
        values = [e[key] for e in extras]
        if callable(log_metric):
            log_metric(f"{name}/{key}", sum(values) / len(values))
        if callable(log_extra) and key in ("process_reward", "outcome_reward", "n_steps"):
            log_extra(f"{name}/{key}", values)


def make_trl_reward(prm_dir: str | Path, config: RewardConfig | None = None, *, gold_key: str = "answer",
                    problem_key: str | None = "question", eos_token_ids: Collection[int] | None = None,
                    scorer_config: Any = None, name: str | None = None) -> RewardFunc:
    """A reward function for ``GRPOTrainer(reward_funcs=[...])`` scoring completions with the PRM in ``prm_dir``.

    ``gold_key``: the dataset column holding the gold final answer (needed unless the config is PRM-only).
    ``problem_key``: the column holding the raw problem the PRM is conditioned on; when the dataset has no
    such column the problem is read from the prompt (:func:`~prm.rewards.adapters.messages.problem_text`).
    ``eos_token_ids``: the policy's EOS and pad ids; when given, a completion whose last id is neither is
    truncated (outcome 0), TRL's own test for ``mask_truncated_completions``.
    ``name``: the reward's ``__name__`` in TRL's logs (default ``prm_<shaping>``).
    The PRM is loaded once per process (:func:`prm.rewards.cached_scorer`).
    """
    return reward_function(load_rewarder(prm_dir, config, scorer_config), gold_key=gold_key, problem_key=problem_key,
                           eos_token_ids=eos_token_ids, name=name)
