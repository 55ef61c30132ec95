"""The problems of an RL run: training prompts as TRL dataset rows, and held-out problems never trained on."""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from prm.datagen import arithmetic_problem
from prm.format import format_prompt
from prm.rl.config import RLRunConfig
from prm.rl.gold import GoldProblem, RLProblem
from prm.tasks import ArithmeticConfig, ArithmeticProblem, generate_problems, stable_id
from warehouse import connect

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


def warehouse_problems(root: str | Path, source: str | None = None) -> list[RLProblem]:
    """Every problem of the warehouse at ``root`` (of ``source``, or of every source) that has a gold answer, in
    problem-id order: what the RL asset trains and evaluates on. A generated arithmetic problem comes back with its
    exact truth (:class:`~prm.tasks.arithmetic.ArithmeticProblem`), any other (GSM8K, MATH, a user's file) as a
    :class:`~prm.rl.gold.GoldProblem`, graded by its answer alone."""
    where, params = ("WHERE source = ?", [source]) if source else ("", [])
    cursor = connect(root).execute(f"SELECT * FROM problems {where} ORDER BY problem_id", params)
    names = [d[0] for d in cursor.description]
    rows = [dict(zip(names, values, strict=True)) for values in cursor.fetchall()]
    problems: list[RLProblem] = [arithmetic_problem(r) or GoldProblem.from_row(r) for r in rows
                                 if str(r.get("gold_answer") or "").strip()]
    if not problems:
        raise ValueError(f"the warehouse at {root} holds no {'problems' if not source else source + ' problems'} with "
                         "a gold answer; materialize a problems partition of that source first (or name another)")
    return problems


def split_pool(pool: Sequence[ArithmeticProblem], config: RLRunConfig
               ) -> tuple[list[ArithmeticProblem], list[ArithmeticProblem]]:
    """(held-out, training) problems drawn from ``pool`` instead of the generator: per difficulty in ``eval_ops``
    up to ``eval_problems`` held out (fewer when that leaves a difficulty no training problem), by a seeded
    hash order; then ``steps * prompts_per_step`` training prompts from the rest, ``anchor_share`` of them of
    ``anchor_ops``, cycling through a pool smaller than that. A missing difficulty is a clear error.

    >>> pool = [p for ops in (1, 2) for p in generate_problems(4, ArithmeticConfig(n_ops=ops), seed=ops)]
    >>> held, train = split_pool(pool, RLRunConfig(eval_ops=(2,), eval_problems=2, train_ops=(2,), anchor_ops=(1,),
    ...                                              steps=2, batch_size=8, num_generations=4))
    >>> len(held), len(train), set(p.problem_id for p in held) & set(p.problem_id for p in train)
    (2, 4, set())
    """
    by_ops: dict[int, list[ArithmeticProblem]] = defaultdict(list)
    for p in sorted(pool, key=lambda p: stable_id("rl", str(config.seed), p.problem_id)):
        by_ops[p.n_ops].append(p)
    trained = set(config.train_ops) | set(config.anchor_ops)
    missing = sorted(ops for ops in {*config.eval_ops, *config.train_ops} if not by_ops.get(ops))
    if missing:
        raise ValueError(f"the problems hold none with {missing} operations (they hold {sorted(by_ops)}); set "
                         "train_ops/anchor_ops/eval_ops to those, or materialize problems of that length")
    held: list[ArithmeticProblem] = []
    for ops in config.eval_ops:
        k = min(config.eval_problems, len(by_ops[ops]) - (ops in trained))
        held += by_ops[ops][:max(k, 1)]
    return held, training_prompts(pool, config, exclude={p.problem_id for p in held})


def training_prompts(pool: Sequence[ArithmeticProblem], config: RLRunConfig,
                     exclude: set[str] | frozenset[str] = frozenset()) -> list[ArithmeticProblem]:
    """``steps * prompts_per_step`` training prompts from ``pool`` less the ids in ``exclude`` (the held-out
    problems), ``anchor_share`` of them of ``anchor_ops``, cycling through a pool smaller than that, shuffled
    by the seed. A difficulty with nothing left to train on is a clear error.

    >>> pool = generate_problems(3, ArithmeticConfig(n_ops=2), seed=0)
    >>> len(training_prompts(pool, RLRunConfig(train_ops=(2,), anchor_ops=(), anchor_share=0, steps=2,
    ...                                        batch_size=8, num_generations=4)))
    4
    """
    by_ops: dict[int, list[ArithmeticProblem]] = defaultdict(list)
    for p in sorted(pool, key=lambda p: stable_id("rl", str(config.seed), p.problem_id)):
        if p.problem_id not in exclude:
            by_ops[p.n_ops].append(p)
    n = config.steps * config.prompts_per_step
    n_anchor = round(n * config.anchor_share) if config.anchor_ops else 0
    train: list[ArithmeticProblem] = []
    for group, k in ((config.anchor_ops, n_anchor), (config.train_ops, n - n_anchor)):
        candidates = [p for ops in group for p in by_ops.get(ops, [])]
        if k and not candidates:
            raise ValueError(f"no problems with {list(group)} operations are left for training once "
                             f"{len(exclude)} are held out; lower eval_problems or add problems")
        train += [candidates[i % len(candidates)] for i in range(k)] if k else []
    random.Random(config.seed).shuffle(train)
    return train


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
