"""Bounds of the settings every trainer reads (the PRM, the policy, the judge, the RL arms): one validator per kind,
so a learning rate is checked against the same bound and reason in every config that holds one.

>>> check_learning_rate("learning_rate", 5e-4)
0.0005
>>> check_learning_rate("learning_rate", 1e10)
Traceback (most recent call last):
...
ValueError: learning_rate=10000000000.0 must be in (0, 1] (AdamW moves every weight by about the learning rate ...
"""

from __future__ import annotations

from prm.settings.bounds import check_count, check_range

# AdamW moves each weight by about the learning rate every step whatever the gradient's scale (its update is
# m / sqrt(v)), so at 1 every weight of a trained model moves by its own size each step; this project trains at
# 1e-4..2e-3. Above 1 only overflow is left to learn: 1e10 saved a PRM whose every weight was NaN.
MAX_LEARNING_RATE = 1.0
# Decoupled weight decay multiplies each weight by (1 - lr * wd) every step: with lr <= 1 and wd <= 1 the factor
# stays in [0, 1), a shrink. At wd 1e30 it was -5e26 and the weights overflowed to NaN. AdamW's default is 0.01.
MAX_WEIGHT_DECAY = 1.0
# Optimizer steps and step intervals: ten million is years of this project's runs; a larger count is a typo that
# would never finish.
MAX_STEPS = 10_000_000
# Rows (or completions) per batch: far above what one accelerator holds of the smallest model; past it the run
# fails deep in torch with an allocation error instead of naming the setting.
MAX_BATCH = 65_536
# CPU threads per process: more than any machine has cores (torch refuses or thrashes past them).
MAX_THREADS = 1_024
# Tokens of one sequence: above any backbone's context this project reads (SmolLM2's 8k, Qwen2.5's 128k).
MAX_TOKENS = 1_048_576
# LoRA rank and alpha: the rank cannot usefully exceed the hidden size (576 for SmolLM2-135M, a few thousand for the
# larger models), and the update is scaled by alpha / rank, so a huge alpha is a huge learning rate.
MAX_LORA = 4_096


def check_learning_rate(name: str, value: object) -> float:
    """An optimizer's learning rate: a finite float in (0, MAX_LEARNING_RATE]."""
    return check_range(name, value, low=0.0, low_open=True, high=MAX_LEARNING_RATE,
                       why="AdamW moves every weight by about the learning rate each step; this project trains at "
                           "1e-4..2e-3, and a larger rate overflows the weights to NaN")


def check_weight_decay(name: str, value: object) -> float:
    """AdamW's decoupled weight decay: a finite float in [0, MAX_WEIGHT_DECAY]."""
    return check_range(name, value, low=0.0, high=MAX_WEIGHT_DECAY,
                       why="each step multiplies every weight by 1 - learning_rate * weight_decay, which must stay a "
                           "shrink; AdamW's default is 0.01")


def check_steps(name: str, value: object, *, low: int = 1) -> int:
    """A number of optimizer steps or a step interval, in [low, MAX_STEPS]."""
    return check_count(name, value, low=low, high=MAX_STEPS, why="optimizer steps: a larger count would never finish")


def check_batch(name: str, value: object, *, low: int = 1) -> int:
    """Rows, completions or samples per batch, in [low, MAX_BATCH]."""
    return check_count(name, value, low=low, high=MAX_BATCH, why="rows per batch: more would not fit in memory")


def check_threads(name: str, value: object) -> int:
    """CPU threads of one process, in [1, MAX_THREADS]."""
    return check_count(name, value, high=MAX_THREADS, why="CPU threads: more than any machine has cores")


def check_tokens(name: str, value: object, *, low: int = 1) -> int:
    """Tokens of one sequence (a context, a completion), in [low, MAX_TOKENS]."""
    return check_count(name, value, low=low, high=MAX_TOKENS, why="tokens: longer than any backbone's context")


def check_lora(name: str, value: object, *, low: int = 1) -> int:
    """A LoRA rank or alpha, in [low, MAX_LORA]."""
    return check_count(name, value, low=low, high=MAX_LORA,
                       why="LoRA rank and alpha: the rank is below the hidden size, and alpha / rank scales the update")
