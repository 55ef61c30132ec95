"""Rows in TRL's stepwise-supervision form (``prompt``, ``completions``, ``labels``): check and load them.

One row is one solution: ``prompt`` the question, ``completions`` its steps, ``labels`` one per step (a bool
for hard labels, a float in [0, 1] for soft ones). Extra columns (``split``, ``problem_id``, ...) ride along.
Both the warehouse training set and rows read from a TRL export go through :func:`check_rows`, so a bad
row is refused the same way whatever its origin.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from prm.training.constants import SOFT_THRESHOLD, SPLITS

LABEL_KINDS = ("hard", "soft")
# datasets.DatasetDict keys that mean our split names.
_SPLIT_ALIASES = {"validation": "val", "valid": "val", "dev": "val"}


def _where(i: int, row: Mapping[str, Any]) -> str:
    sid = row.get("solution_id")
    return f"row {i}" + (f" (solution {sid})" if sid is not None else "")


def check_label(value: Any, label_kind: str, where: str) -> float:
    """One step label as a float in [0, 1]; raises a ValueError that says what to fix.

    >>> check_label(True, "hard", "row 0"), check_label(0.25, "soft", "row 0")
    (1.0, 0.25)
    >>> check_label(float("nan"), "soft", "row 3")
    Traceback (most recent call last):
    ...
    ValueError: row 3: label nan is NaN or infinite...
    """
    if value is None:
        raise ValueError(f"{where}: a step has no label (None); drop the solution or label every step")
    if not isinstance(value, bool | int | float):
        raise ValueError(f"{where}: label {value!r} is a {type(value).__name__}; labels are bools or floats in [0, 1]")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{where}: label {value!r} is NaN or infinite; soft labels are probabilities in [0, 1] - "
                         "fix the labeler or drop these steps")
    if not 0.0 <= number <= 1.0:
        raise ValueError(f"{where}: label {value!r} is outside [0, 1]; soft labels are P(step is good) - rescale "
                         "them (an advantage a in [-1, 1] as (a + 1) / 2) or use label_kind='hard'")
    if label_kind == "hard" and number not in (0.0, 1.0):
        raise ValueError(f"{where}: label {value!r} is soft but label_kind='hard'; use label_kind='soft' or "
                         f"threshold the labels (good = label >= {SOFT_THRESHOLD})")
    return number


def check_rows(rows: Sequence[Mapping[str, Any]], label_kind: str) -> None:
    """Refuse rows a PRM cannot train on, naming the row: missing fields, empty step lists, a label count
    that differs from the step count, and labels that are None, NaN, outside [0, 1] or soft for hard training.

    >>> check_rows([{"prompt": "1+1", "completions": [], "labels": []}], "hard")
    Traceback (most recent call last):
    ...
    ValueError: row 0: empty step list; every solution needs at least one step - drop it
    """
    if label_kind not in LABEL_KINDS:
        raise ValueError(f"label_kind={label_kind!r} must be one of {LABEL_KINDS}")
    for i, row in enumerate(rows):
        where = _where(i, row)
        missing = [k for k in ("prompt", "completions", "labels") if k not in row]
        if missing:
            raise ValueError(f"{where}: missing {missing}; rows follow TRL's stepwise supervision "
                             "{'prompt': str, 'completions': [str, ...], 'labels': [bool | float, ...]}")
        if not isinstance(row["prompt"], str) or not row["prompt"]:
            raise ValueError(f"{where}: prompt must be a non-empty string (the question), got {row['prompt']!r}")
        steps, labels = row["completions"], row["labels"]
        if not steps:
            raise ValueError(f"{where}: empty step list; every solution needs at least one step - drop it")
        if any(not isinstance(s, str) or not s for s in steps):
            raise ValueError(f"{where}: every step must be a non-empty string; segment with prm.format.segment")
        if len(labels) != len(steps):
            raise ValueError(f"{where}: {len(steps)} steps but {len(labels)} labels; give one label per step")
        for label in labels:
            check_label(label, label_kind, where)
        if "split" in row and row["split"] not in SPLITS:
            raise ValueError(f"{where}: split {row['split']!r} is not one of {SPLITS}")


def class_counts(rows: Iterable[Mapping[str, Any]]) -> tuple[int, int]:
    """(good steps, bad steps); a soft label counts as good at or above ``SOFT_THRESHOLD``.

    >>> class_counts([{"labels": [True, False, 0.7]}])
    (2, 1)
    """
    good = bad = 0
    for row in rows:
        for label in row["labels"]:
            if float(label) >= SOFT_THRESHOLD:
                good += 1
            else:
                bad += 1
    return good, bad


def check_both_classes(rows: Sequence[Mapping[str, Any]], what: str) -> None:
    """Refuse training rows whose steps are all good or all bad: the PRM would learn a constant."""
    good, bad = class_counts(rows)
    if not good or not bad:
        only = "good" if good else "bad"
        raise ValueError(
            f"{what}: all {good + bad} step labels are {only}, so a PRM would learn a constant; add solutions "
            "with the other class (sample at a higher temperature or on longer problems so the policy makes "
            "mistakes) or choose a label method that finds both"
        )


def split_of(row: Mapping[str, Any]) -> str:
    """A row's split; rows without one are training rows."""
    return str(row.get("split", "train"))


def load_rows(source: str | Path | Sequence[Mapping[str, Any]] | Any) -> list[dict[str, Any]]:
    """Rows from a list of mappings, a ``datasets.Dataset`` / ``DatasetDict`` (its keys become ``split``), a
    ``datasets`` folder (``save_to_disk``), a ``.jsonl`` file or a ``.parquet`` file.

    >>> load_rows([{"prompt": "q", "completions": ["a"], "labels": [True]}])[0]["labels"]
    [True]
    """
    if isinstance(source, str | Path):
        return _load_path(Path(source))
    if hasattr(source, "keys") and hasattr(source, "column_names") and isinstance(source.column_names, dict):
        rows = []  # a DatasetDict: one split per key
        for name in source:
            split = _SPLIT_ALIASES.get(name, name)
            rows += [{**dict(r), "split": split} for r in source[name]]
        return rows
    return [dict(r) for r in source]


def _load_path(path: Path) -> list[dict[str, Any]]:
    if path.is_dir():
        if not any((path / f).is_file() for f in ("dataset_info.json", "state.json", "dataset_dict.json")):
            raise FileNotFoundError(f"{path} is not a datasets folder (no dataset_info.json or dataset_dict.json); "
                                    "pass a folder written by Dataset.save_to_disk, a .jsonl or a .parquet file")
        import datasets

        return load_rows(datasets.load_from_disk(str(path)))
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist; pass a datasets folder, a .jsonl or a .parquet file")
    if path.suffix == ".jsonl":
        with path.open() as f:
            return [json.loads(line) for line in f if line.strip()]
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        return pq.read_table(path).to_pylist()
    raise ValueError(f"{path}: unknown row file type {path.suffix!r}; use .jsonl, .parquet or a datasets folder")
