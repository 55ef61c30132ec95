"""The bounds of a recipe's numbers: each is checked by the library's validator for that kind of setting
(:mod:`prm.settings`), so a recipe, the engine, the labelers and the trainers share one bound and one reason.

A recipe's number reaches an engine, a trainer or a budget forty minutes into a run; a NaN, an infinity or a typo's
10**30 is refused here instead, all of them in one message (pipelines.recipe collects one line per problem).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from prm.settings import (
    check_batch,
    check_count,
    check_kv_cache_gib,
    check_problems,
    check_range,
    check_rollout_budget,
    check_rollouts,
    check_samples,
    check_seed,
    check_steps,
    check_temperature,
    check_tokens,
    check_top_p,
)

# A pipelines.recipe.Recipe: recipe.py imports this module, so the type is not imported back (no import circle).
Recipe = Any


def _checks(recipe: Recipe) -> list[tuple[Callable[..., object], str, object]]:
    """(validator, key, value) of every number a recipe sets; each validator is the library's own (prm.settings),
    so a recipe is held to the bound the engine, the labelers and the trainers hold the same setting to."""
    s, lb, p, policy = recipe.sampling, recipe.labels, recipe.prm, recipe.policy
    return [
        (check_problems, "dataset.limit", recipe.dataset.limit),
        (check_samples, "sampling.n", s.n),
        (check_tokens, "sampling.max_tokens", s.max_tokens),
        (check_tokens, "policy.max_model_len", policy.max_model_len),
        (check_kv_cache_gib, "policy.kv_cache_gib", policy.kv_cache_gib),
        (check_temperature, "sampling.temperature", s.temperature),
        (check_top_p, "sampling.top_p", s.top_p),
        (check_seed, "sampling.seed", s.seed),
        (check_rollouts, "labels.rollouts", lb.rollouts),
        (check_rollouts, "labels.omegaprm_k", lb.omegaprm_k),
        (check_rollouts, "labels.omegaprm_searches", lb.omegaprm_searches),
        (check_rollouts, "labels.judge_votes", lb.judge_votes),
        (check_rollout_budget, "labels.rollout_budget", lb.rollout_budget),
        (check_steps, "prm.max_steps", p.max_steps),
        (check_batch, "prm.batch_size", p.batch_size),
        (check_steps, "rl.steps", recipe.rl.steps),
    ]


def number_problems(recipe: Recipe) -> list[str]:
    """One line for each number of ``recipe`` that is not finite or not within its bound (empty: all fit).

    >>> from pipelines.recipe import parse_recipe
    >>> number_problems(parse_recipe({"sampling": {"n": 8, "temperature": 0.7}}))
    []
    """
    problems = [_fails(check, key, value) for check, key, value in _checks(recipe) if value is not None]
    checks = recipe.checks
    if checks.min_correct is not None:
        problems.append(_fails(check_count, "checks.min_correct", checks.min_correct, low=0, high=2**62,
                               why="correct solutions; 0 turns the check off"))
    if checks.max_no_answer_share is not None:
        problems.append(_fails(check_range, "checks.max_no_answer_share", checks.max_no_answer_share, low=0.0,
                               high=1.0, why="a share of the solutions; 1 turns the check off"))
    length, budget = recipe.policy.max_model_len, recipe.sampling.max_tokens
    if isinstance(length, int) and isinstance(budget, int) and 1 <= length <= budget:
        problems.append(f"sampling.max_tokens={budget} leaves no room for the question in policy.max_model_len="
                        f"{length} (the engine holds question + solution); lower max_tokens or raise max_model_len")
    return [p for p in problems if p]


def _fails(check, key: str, value: object, **bounds: object) -> str:
    """The check's one-line refusal of ``value``, or "" when it passes."""
    try:
        check(key, value, **bounds)
    except ValueError as exc:
        return str(exc)
    return ""
