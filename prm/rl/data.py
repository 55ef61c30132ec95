"""The problems of an RL run: training prompts as TRL dataset rows, and held-out problems never trained on."""

from __future__ import annotations

import random
from typing import Any

from prm.format import format_prompt
from prm.rl.config import RLRunConfig
from prm.tasks.arithmetic import ArithmeticConfig, ArithmeticProblem, generate_problems

# Seed offsets that keep the held-out draw apart from the training draw for every config seed; problem ids
# are checked as well, since a small difficulty space can draw one problem twice.
_TRAIN_SEED, _EVAL_SEED = 1_000, 2_000


def _task(config: RLRunConfig, n_ops: int) -> ArithmeticConfig:
    return ArithmeticConfig(n_ops=n_ops, operators=config.operators, max_value=config.max_value, style=config.style)


def _spread(n: int, ops: tuple[int, ...]) -> list[int]:
    """``n`` split as evenly as possible over ``ops`` (the remainder goes to the first ones)."""
    return [n // len(ops) + (i < n % len(ops)) for i in range(len(ops))]


def eval_problems(config: RLRunConfig) -> list[ArithmeticProblem]:
    """``eval_problems`` held-out problems per difficulty in ``eval_ops``; the same for every arm.

    >>> ps = eval_problems(RLRunConfig(eval_ops=(9, 10), eval_problems=2))
    >>> [p.n_ops for p in ps]
    [9, 9, 10, 10]
    """
    out: list[ArithmeticProblem] = []
    for ops in config.eval_ops:
        out += generate_problems(config.eval_problems, _task(config, ops), seed=_EVAL_SEED + 100 * config.seed + ops)
    return out


def train_problems(config: RLRunConfig, exclude: set[str] = frozenset()) -> list[ArithmeticProblem]:
    """Enough problems for ``steps`` optimizer steps, each seen once: ``anchor_share`` from ``anchor_ops``,
    the rest from ``train_ops``, shuffled by the seed; problems whose id is in ``exclude`` are replaced.

    >>> cfg = RLRunConfig(steps=5, batch_size=8, num_generations=4, anchor_share=0.5)
    >>> ps = train_problems(cfg)
    >>> len(ps), sorted({p.n_ops for p in ps})
    (10, [6, 7, 8, 9, 10])
    """
    n = config.steps * config.prompts_per_step
    n_anchor = round(n * config.anchor_share) if config.anchor_ops else 0
    plan = list(zip(config.anchor_ops, _spread(n_anchor, config.anchor_ops), strict=True)) if n_anchor else []
    plan += list(zip(config.train_ops, _spread(n - n_anchor, config.train_ops), strict=True))
    out: list[ArithmeticProblem] = []
    for ops, k in plan:
        if k == 0:
            continue
        # Draw extra so that excluded ids can be skipped; the first k kept are the same for any draw size.
        drawn = generate_problems(2 * k + len(exclude), _task(config, ops), seed=_TRAIN_SEED + 100 * config.seed + ops)
        kept = [p for p in drawn if p.problem_id not in exclude][:k]
        if len(kept) < k:
            raise ValueError(f"only {len(kept)} of {k} training problems with {ops} operations avoid the held-out "
                             "set; raise max_value or lower eval_problems")
        out += kept
    random.Random(config.seed).shuffle(out)
    return out


def dataset_rows(problems: list[ArithmeticProblem], tokenizer: Any) -> list[dict[str, Any]]:
    """TRL rows: ``prompt`` (what the policy sees), ``question`` (what the PRM is conditioned on, the column
    prm.rewards' TRL adapter reads by default) and ``answer`` (the gold answer it grades against).

    >>> class Plain:
    ...     chat_template = None
    >>> p = generate_problems(1, ArithmeticConfig(n_ops=1, operators="+"), seed=0)[0]
    >>> row = dataset_rows([p], Plain())[0]
    >>> row["prompt"] == row["question"] + "\\n", row["answer"], row["n_ops"]
    (True, '27', 1)
    """
    return [{"prompt": format_prompt(tokenizer, p.question), "question": p.question, "answer": str(p.answer),
             "n_ops": p.n_ops} for p in problems]
