"""Bounds of the settings every sampler reads (the engine, a recipe's sampling and labels, the RL arms): one validator
per kind, so a temperature or a rollout count is checked against the same bound and reason wherever it is set.

>>> check_temperature("sampling.temperature", 0.7)
0.7
>>> check_rollouts("labels.rollouts", 10**9)
Traceback (most recent call last):
...
ValueError: labels.rollouts=1000000000 must be in [1, 1024] (each multiplies the generations of every step of ...
"""

from __future__ import annotations

from prm.settings.bounds import check_count, check_range

# Temperature divides the logits: 0 is greedy, and above 10 every token is about as likely as any other (noise).
MAX_TEMPERATURE = 10.0
# Solutions per problem: each is a full generation of the whole dataset again; Math-Shepherd samples 15, so 4,096 is
# past any labeling recipe and a typo beyond it would run for days.
MAX_SAMPLES = 4096
# Rollouts per step prefix, OmegaPRM's k and searches, judge votes: each multiplies the generations of every step of
# every solution (Math-Shepherd's N is 8), so a thousand is already a day's budget on one GPU.
MAX_ROLLOUTS = 1024
# Rollouts one labeler may spend on one partition: a billion is years of one GPU, so more is a typo.
MAX_ROLLOUT_BUDGET = 10**9
# Problems read from a file: more than any public math set (NuminaMath-CoT has ~860k), so more is a typo.
MAX_PROBLEMS = 10**7
# GiB of KV cache: no accelerator (or host) the engine runs on has a TiB for one model's cache.
MAX_KV_CACHE_GIB = 1024.0


def check_temperature(name: str, value: object, *, low_open: bool = False, why: str = "") -> float:
    """A sampling temperature in [0, MAX_TEMPERATURE] (``low_open``: 0 refused, for samplers that need variety;
    ``why`` says why, first)."""
    bound = f"0 is greedy; above {MAX_TEMPERATURE:g} every token is about equally likely"
    return check_range(name, value, low=0.0, low_open=low_open, high=MAX_TEMPERATURE,
                       why=f"{why}; {bound}" if why else bound)


def check_top_p(name: str, value: object) -> float:
    """Nucleus sampling's share of the probability mass, in (0, 1]."""
    return check_range(name, value, low=0.0, low_open=True, high=1.0,
                       why="nucleus sampling keeps a share of the probability mass")


def check_samples(name: str, value: object) -> int:
    """Solutions sampled per problem, in [1, MAX_SAMPLES]."""
    return check_count(name, value, high=MAX_SAMPLES,
                       why=f"solutions per problem; each is a full generation, {MAX_SAMPLES} is past any recipe")


def check_rollouts(name: str, value: object) -> int:
    """Rollouts (or votes, or searches) per step or solution, in [1, MAX_ROLLOUTS]."""
    return check_count(name, value, high=MAX_ROLLOUTS,
                       why=f"each multiplies the generations of every step of every solution; {MAX_ROLLOUTS} is a "
                           "day's budget")


def check_rollout_budget(name: str, value: object) -> int:
    """Rollouts a labeler may spend on one partition (or one question), in [1, MAX_ROLLOUT_BUDGET]."""
    return check_count(name, value, high=MAX_ROLLOUT_BUDGET,
                       why=f"a budget of rollouts; leave it out for no budget, {MAX_ROLLOUT_BUDGET:,} is years of "
                           "one GPU")


def check_problems(name: str, value: object) -> int:
    """Problems read from a dataset, in [1, MAX_PROBLEMS]."""
    return check_count(name, value, high=MAX_PROBLEMS,
                       why=f"problems read; more than any public math set holds ({MAX_PROBLEMS:,})")


def check_kv_cache_gib(name: str, value: object) -> float:
    """GiB of an engine's KV cache, in (0, MAX_KV_CACHE_GIB]."""
    return check_range(name, value, low=0.0, low_open=True, high=MAX_KV_CACHE_GIB,
                       why="GiB of engine memory for the KV cache; leave it out to follow the device")
