"""Problem splits: by a hash of the problem id, stratified by outcome so that validation and test hold wrong and
right solutions where the data has them.

:func:`problem_split` places a problem by a hash of its id, so a small partition (the demo's
24 problems) can put no wrong solution into validation on some days, and then no threshold can be chosen there.
:func:`stratified_splits` starts from that hash split and, for each split (train, then validation, then test)
and each outcome (a solution with a wrong step, an all-correct solution) that the split lacks, moves in one
problem with that outcome from a split that keeps another, or from a later split in that order. Every label method
reads the same map (it depends on exact truth alone), so all PRMs still share their held-out problems; a problem
keeps its split when rows are added unless it is one that was moved. Several sources named together (a flywheel's
window of rounds) are stratified one source at a time: each round's held-out samples, where its PRM is compared
with the last one, get both outcomes, and a round keeps its split when later rounds join the window.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import duckdb

from prm.datagen import policy_written_sql
from prm.training.constants import SPLITS
from warehouse import source_clause

if TYPE_CHECKING:
    from prm.training.set_config import TrainingSetConfig

# Per problem, which outcomes its gradable, model-written solutions with exact truth have (what evaluation reads).
_OUTCOMES_SQL = f"""
SELECT p.problem_id, any_value(p.source) AS source, any_value(p.n_gold_steps) AS n_gold_steps,
       coalesce(bool_or(so.first_error_truth >= 0), false) AS has_wrong,
       coalesce(bool_or(so.first_error_truth = -1), false) AS has_right
FROM problems p JOIN solutions so ON so.problem_id = p.problem_id
WHERE so.status = 'ok' AND so.first_error_truth IS NOT NULL AND so.n_steps > 0
  AND {policy_written_sql('so.model')} {{source_filter}}
GROUP BY p.problem_id
ORDER BY p.problem_id
"""
OUTCOMES = ("has_wrong", "has_right")


def problem_hash(problem_id: str, config: TrainingSetConfig) -> float:
    """A problem's place in [0, 1): a hash of ``(split_seed, problem_id)``."""
    digest = hashlib.sha256(f"{config.split_seed}:{problem_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def problem_split(problem_id: str, n_gold_steps: int | None, config: TrainingSetConfig) -> str:
    """The hash split of one problem: a pure function of the id (and, easy-to-hard, its gold step count).

    >>> from prm.training.set_config import TrainingSetConfig
    >>> cfg = TrainingSetConfig(method="truth", train_max_steps=3)
    >>> problem_split("p1", 5, cfg)
    'test'
    >>> problem_split("p1", 2, cfg) in ("train", "val", "test")  # test: held out in distribution
    True
    """
    u = problem_hash(problem_id, config)
    if config.train_max_steps is not None:
        if n_gold_steps is None:
            raise ValueError(f"problem {problem_id} has no n_gold_steps, so easy-to-hard cannot place it; fill "
                             "problems.n_gold_steps or set train_max_steps=None to split by share")
        if n_gold_steps > config.train_max_steps:
            return "test"
    if u < config.test_share:
        return "test"
    return "val" if u < config.test_share + config.val_share else "train"


@dataclass(frozen=True)
class ProblemSplits:
    """``splits(problem_id, n_gold_steps)``: the hash split, except for the problems stratification moved."""

    config: TrainingSetConfig
    moved: Mapping[str, str] = field(default_factory=dict)  # problem_id -> split it was moved to

    def __call__(self, problem_id: str, n_gold_steps: int | None) -> str:
        return self.moved.get(problem_id) or problem_split(problem_id, n_gold_steps, self.config)


def stratify(problems: list[Mapping[str, Any]], config: TrainingSetConfig) -> ProblemSplits:
    """The split map for ``problems`` (mappings with ``problem_id``, ``n_gold_steps``, ``has_wrong``,
    ``has_right``); see the module docstring.

    >>> from prm.training.set_config import TrainingSetConfig
    >>> cfg = TrainingSetConfig(method="truth", val_share=0.25, test_share=0.25)
    >>> rows = [{"problem_id": f"p{i}", "n_gold_steps": 3, "has_wrong": i % 2 == 0, "has_right": True}
    ...         for i in range(12)]
    >>> splits = stratify(rows, cfg)
    >>> {s: sorted({o for r in rows if splits(r["problem_id"], 3) == s for o in OUTCOMES if r[o]}) for s in SPLITS}
    {'train': ['has_right', 'has_wrong'], 'val': ['has_right', 'has_wrong'], 'test': ['has_right', 'has_wrong']}
    """
    split = {r["problem_id"]: problem_split(r["problem_id"], r["n_gold_steps"], config) for r in problems}
    moved: dict[str, str] = {}
    # Easy-to-hard: test is the long problems by definition, so it neither gives nor takes problems.
    movable = SPLITS[:2] if config.train_max_steps is not None else SPLITS
    for target in movable:
        for outcome in OUTCOMES:
            holders = Counter(split[r["problem_id"]] for r in problems if r[outcome])
            if holders[target] or not holders:
                continue

            # A donor keeps another problem of this outcome in its split, or its split comes later in the order
            # (training needs both outcomes most, then validation, then test).
            givers = {here for here, n in holders.items() if here in movable
                      and (n >= 2 or SPLITS.index(here) > SPLITS.index(target))}
            donors = [r["problem_id"] for r in problems
                      if r[outcome] and r["problem_id"] not in moved and split[r["problem_id"]] in givers]
            if donors:  # the split that holds the most gives; within it, the problem with the smallest hash
                pid = min(donors, key=lambda p: (-holders[split[p]], problem_hash(p, config)))
                split[pid] = moved[pid] = target
    return ProblemSplits(config, moved)


def stratified_splits(con: duckdb.DuckDBPyConnection, config: TrainingSetConfig) -> ProblemSplits:
    """:func:`stratify` over the problems of ``config.source`` (one, or every source) in the warehouse; several
    sources named in a tuple are stratified one at a time (see the module docstring)."""
    source_filter, params = source_clause(config.source)
    cursor = con.execute(_OUTCOMES_SQL.format(source_filter=source_filter), params)
    names = [d[0] for d in cursor.description]
    rows = [dict(zip(names, values, strict=True)) for values in cursor.fetchall()]
    if not isinstance(config.source, tuple):
        return stratify(rows, config)
    moved: dict[str, str] = {}
    for source in config.source:
        moved.update(stratify([r for r in rows if r["source"] == source], config).moved)
    return ProblemSplits(config, moved)


def held_out_outcomes(solutions: Mapping[str, list[Mapping[str, Any]]]) -> dict[str, dict[str, int]]:
    """Per held-out split, how many solutions have a wrong step and how many are all correct.

    >>> held_out_outcomes({"val": [{"first_error": 2}, {"first_error": -1}], "test": []})
    {'val': {'wrong': 1, 'right': 1}, 'test': {'wrong': 0, 'right': 0}}
    """
    return {split: {"wrong": sum(s["first_error"] >= 0 for s in rows), "right": sum(s["first_error"] < 0 for s in rows)}
            for split, rows in solutions.items()}
