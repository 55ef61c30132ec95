"""The PRM training set from the warehouse: one label method's step labels, split by problem.

One DuckDB query joins ``steps`` (text, order), ``solutions`` (status), ``problems`` (question, gold step
count) and ``step_labels`` of the chosen method (or ``steps.is_correct_truth`` for ``"truth"``). Each kept
solution becomes one row in TRL's stepwise-supervision form. Decisions:

* **Split by problem**: a problem's split is a hash of ``(split_seed, problem_id)``, stratified by outcome
  (:mod:`prm.training.splits`), so every solution of a problem lands in one split, validation and test hold
  wrong and right solutions where the data has them, and PRMs trained on different label methods share the
  same held-out problems (:func:`~prm.training.splits.stratified_splits` is what evaluation calls too).
* **Easy to hard** (``train_max_steps = n``, Sun et al. 2024 "Easy-to-Hard Generalization"): problems with
  more than ``n`` gold steps are test (the easy-to-hard test set); the rest split by share, so ``test_share``
  of them are test too (the in-distribution test set; :func:`prm.evaluation.heldout.split_test_sets` tells them apart).
* **Missing labels**: a solution with a step the method did not label (no row, or ``hard_label`` null for
  ``unverifiable``) is dropped whole, never trained on a prefix, and counted in the stats. With
  ``exclude_pseudo`` a ``pseudo`` row (a PRM's own label, written by active labeling) counts as no row.
* **Balance** only touches the train split (val and test keep the real class mix that metrics need):
  ``downsample`` drops solutions of the majority kind (all steps good vs. some step bad) at random until
  both kinds are equally many, keeping every kept solution's full step sequence; ``weight`` keeps all
  rows and sets per-class loss weights n / (2 n_class) from the train steps.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from prm.files import atomic_write_text, read_jsonl, write_jsonl
from prm.format import STATUS_PSEUDO
from prm.training.constants import META_FILE, ROWS_FILE, SOFT_THRESHOLD, SPLITS
from prm.training.rows import check_both_classes, check_label, check_rows, class_counts
from prm.training.set_config import TrainingSetConfig
from prm.training.splits import stratified_splits
from warehouse import Snapshot, snapshot_connection, source_clause
from warehouse.methods import CONSENSUS, TRUTH


@dataclass(frozen=True)
class TrainingSetStats:
    """Counts per split and what was dropped, so no solution disappears without a number."""

    solutions: dict[str, int]  # rows (solutions) per split
    problems: dict[str, int]  # distinct problems per split
    good_steps: dict[str, int]  # steps labeled good (soft: >= SOFT_THRESHOLD) per split
    bad_steps: dict[str, int]
    dropped_unlabeled: int  # solutions the method labeled no step of (e.g. outside its budget)
    dropped_partial: int  # solutions with some steps unlabeled or unverifiable
    dropped_not_consensus: int  # consensus_only: solutions without consensus labels
    dropped_by_balance: int  # balance="downsample": train solutions removed
    class_weights: tuple[float, float] | None = None  # (bad, good) loss weights, balance="weight"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class TrainingSet:
    """Rows in TRL stepwise-supervision form plus ``problem_id``, ``solution_id``, ``split``, ``n_gold_steps``."""

    rows: list[dict[str, Any]]
    config: TrainingSetConfig
    stats: TrainingSetStats = field(repr=False)
    # The warehouse tables' Delta versions the rows were read from ({} when unknown): a PRM trained on this set
    # names its exact data, and ``warehouse.connect(root, versions=...)`` reads that data again.
    warehouse_versions: dict[str, int | None] = field(default_factory=dict)

    def split(self, name: str) -> list[dict[str, Any]]:
        """The rows of one split (``train``, ``val`` or ``test``)."""
        if name not in SPLITS:
            raise ValueError(f"split {name!r} is not one of {SPLITS}")
        return [r for r in self.rows if r["split"] == name]

    def save(self, folder: str | Path) -> Path:
        """Write ``rows.jsonl`` (readable by any TRL-format reader) and ``training_set.json`` into ``folder``."""
        folder = Path(folder)
        write_jsonl(self.rows, folder / ROWS_FILE)
        meta = {"config": asdict(self.config), "stats": self.stats.to_dict(),
                "warehouse_versions": self.warehouse_versions}
        atomic_write_text(folder / META_FILE, json.dumps(meta, indent=2) + "\n")  # last: a folder with it is whole
        return folder

    @staticmethod
    def load(folder: str | Path) -> TrainingSet:
        """Read a folder written by :meth:`save`.

        >>> TrainingSet.load("/nonexistent")
        Traceback (most recent call last):
        ...
        FileNotFoundError: /nonexistent has no training_set.json...
        """
        folder = Path(folder)
        if not (folder / META_FILE).is_file():
            raise FileNotFoundError(f"{folder} has no {META_FILE}; it was not written by TrainingSet.save "
                                    "(for TRL-format rows pass the .jsonl or datasets folder to train_prm)")
        meta = json.loads((folder / META_FILE).read_text())
        stats = meta["stats"]
        if stats.get("class_weights") is not None:
            stats["class_weights"] = tuple(stats["class_weights"])
        rows = read_jsonl(folder / ROWS_FILE)  # a damaged line is named with its file and number
        return TrainingSet(rows, TrainingSetConfig(**meta["config"]), TrainingSetStats(**stats),
                           meta.get("warehouse_versions") or {})


def _label_columns(method: str, exclude_pseudo: bool = False) -> tuple[str, str, str]:
    """SQL for (hard, soft) label and the join that brings them (without pseudo-labels when ``exclude_pseudo``)."""
    if method == TRUTH:
        return "s.is_correct_truth", "CAST(s.is_correct_truth AS DOUBLE)", ""
    join = ("LEFT JOIN step_labels l ON l.solution_id = s.solution_id AND l.step_idx = s.step_idx "
            "AND l.method = $method" + (f" AND l.status <> '{STATUS_PSEUDO}'" if exclude_pseudo else ""))
    return "l.hard_label", "CAST(l.soft_label AS DOUBLE)", join


def _check_method_has_labels(con: duckdb.DuckDBPyConnection, config: TrainingSetConfig) -> None:
    """A clear error when the method has no labels of the chosen kind, naming the methods that have some."""
    if config.method == TRUTH:
        n = con.execute("SELECT count(is_correct_truth) FROM steps").fetchone()[0]
        if not n:
            raise ValueError("method='truth' but no step has is_correct_truth: the tasks in this warehouse define "
                             "no exact step truth; choose a label method from step_labels instead")
        return
    column = "hard_label" if config.label_kind == "hard" else "soft_label"
    counts = dict(con.execute(f"SELECT method, count({column}) FROM step_labels GROUP BY method").fetchall())
    if counts.get(config.method):
        return
    have = sorted(m for m, n in counts.items() if n)
    other = "soft_label" if column == "hard_label" else "hard_label"
    has_other = con.execute(f"SELECT count({other}) FROM step_labels WHERE method = ?",
                            [config.method]).fetchone()[0]
    hint = (f"; it has {other} values, so set label_kind='{'soft' if other == 'soft_label' else 'hard'}'"
            if has_other else f"; run its labeling asset first, or choose one of {have or ['truth']}")
    raise ValueError(f"no step_labels.{column} for method {config.method!r}{hint}")


def _query(config: TrainingSetConfig, source: str) -> str:
    hard, soft, join = _label_columns(config.method, config.exclude_pseudo)
    return f"""
SELECT s.solution_id, s.problem_id, p.question, p.n_gold_steps, s.step_idx, s.text, {hard} AS hard, {soft} AS soft
FROM steps s
JOIN solutions so ON so.solution_id = s.solution_id
JOIN problems p ON p.problem_id = s.problem_id
{join}
WHERE so.status = 'ok' {source}
ORDER BY s.problem_id, s.solution_id, s.step_idx"""


def build_training_set(snapshot: Snapshot, config: TrainingSetConfig) -> TrainingSet:
    """Rows for PRM training from a warehouse root (or an open :func:`warehouse.connect` connection).

    Raises a ValueError that says what to do when the method has no labels, when the train split has one
    class only, when a label is NaN or outside [0, 1], or when the steps table is incomplete.

    Example::

        ts = build_training_set("data/warehouse", TrainingSetConfig(method="omegaprm", train_max_steps=4))
        ts.stats.solutions  # {'train': ..., 'val': ..., 'test': ...}
    """
    con = snapshot_connection(snapshot)
    _check_method_has_labels(con, config)
    params: dict[str, Any] = {}
    if config.method != TRUTH:
        params["method"] = config.method
    source, source_params = source_clause(config.source)
    records = con.execute(_query(config, source), {**params, **source_params}).fetchall()
    splits = stratified_splits(con, config)
    consensus: set[str] | None = None
    if config.consensus_only:
        consensus = {r[0] for r in con.execute(
            "SELECT DISTINCT solution_id FROM step_labels WHERE method = ? AND hard_label IS NOT NULL",
            [CONSENSUS]).fetchall()}
        if not consensus:
            raise ValueError("consensus_only=True but step_labels holds no consensus labels; materialize the "
                             "consensus labels first or set consensus_only=False")

    by_solution: dict[str, list[tuple]] = defaultdict(list)
    for rec in records:
        by_solution[rec[0]].append(rec)
    rows, unlabeled, partial, not_consensus = [], 0, 0, 0
    use_hard = config.label_kind == "hard"
    for sid, recs in by_solution.items():
        idx = [r[4] for r in recs]
        if idx != list(range(len(recs))):
            raise ValueError(f"solution {sid} has step rows {idx} (or duplicate labels for a step); the steps "
                             "table must hold steps 0..n-1 once each and step_labels one row per step and method - "
                             "re-materialize the steps / labels partition with replace")
        if consensus is not None and sid not in consensus:
            not_consensus += 1
            continue
        labels = [r[6] if use_hard else r[7] for r in recs]
        missing = sum(v is None for v in labels)
        if missing == len(labels):
            unlabeled += 1
            continue
        if missing:
            partial += 1
            continue
        where = f"solution {sid} (method {config.method})"
        values = [check_label(v, config.label_kind, where) for v in labels]
        _, pid, question, n_gold = recs[0][:4]
        rows.append({
            "prompt": question,
            "completions": [r[5] for r in recs],
            "labels": [v == 1.0 for v in values] if use_hard else values,
            "problem_id": pid,
            "solution_id": sid,
            "split": splits(pid, n_gold),
            "n_gold_steps": n_gold,
        })
    check_rows(rows, config.label_kind)
    train = [r for r in rows if r["split"] == "train"]
    if not train:
        raise ValueError(f"no labeled solutions in the train split ({len(rows)} kept in val/test, {unlabeled} "
                         f"unlabeled, {partial} partly labeled); label more problems, lower val_share/test_share, "
                         "or raise train_max_steps")
    check_both_classes(train, f"the train split of method {config.method!r} ({config.label_kind} labels)")
    rows, dropped = _downsample(rows, config) if config.balance == "downsample" else (rows, 0)
    rows.sort(key=lambda r: (SPLITS.index(r["split"]), r["problem_id"], r["solution_id"]))
    return TrainingSet(rows, config, _stats(rows, config, unlabeled, partial, not_consensus, dropped),
                       _read_versions(con))


def _read_versions(con: duckdb.DuckDBPyConnection) -> dict[str, int | None]:
    """The table versions a :func:`warehouse.connect` connection reads; {} for another connection."""
    from warehouse import snapshot_versions

    try:
        return snapshot_versions(con)
    except duckdb.CatalogException:  # a plain DuckDB connection the caller built: versions unknown
        return {}


def _has_bad_step(row: dict[str, Any]) -> bool:
    return any(float(v) < SOFT_THRESHOLD for v in row["labels"])


def _downsample(rows: list[dict[str, Any]], config: TrainingSetConfig) -> tuple[list[dict[str, Any]], int]:
    """Drop train solutions of the majority kind (all good vs. some bad) until both kinds are equally many."""
    train = [r for r in rows if r["split"] == "train"]
    wrong = [r for r in train if _has_bad_step(r)]
    right = [r for r in train if not _has_bad_step(r)]
    if not wrong or not right:
        return rows, 0  # every train solution has a bad step (or none does): nothing to balance at this level
    major, minor = (wrong, right) if len(wrong) > len(right) else (right, wrong)
    keep = random.Random(config.split_seed).sample(major, len(minor))
    drop = {r["solution_id"] for r in major} - {r["solution_id"] for r in keep}
    return [r for r in rows if r["solution_id"] not in drop], len(drop)


def _stats(rows: list[dict[str, Any]], config: TrainingSetConfig, unlabeled: int, partial: int,
           not_consensus: int, by_balance: int) -> TrainingSetStats:
    per_split = {s: [r for r in rows if r["split"] == s] for s in SPLITS}
    counts = {s: class_counts(rs) for s, rs in per_split.items()}
    weights = None
    if config.balance == "weight":
        good, bad = counts["train"]
        weights = ((good + bad) / (2 * bad), (good + bad) / (2 * good))  # sklearn's "balanced" weights
    return TrainingSetStats(
        solutions={s: len(rs) for s, rs in per_split.items()},
        problems={s: len({r["problem_id"] for r in rs}) for s, rs in per_split.items()},
        good_steps={s: c[0] for s, c in counts.items()},
        bad_steps={s: c[1] for s, c in counts.items()},
        dropped_unlabeled=unlabeled,
        dropped_partial=partial,
        dropped_not_consensus=not_consensus,
        dropped_by_balance=by_balance,
        class_weights=weights,
    )
