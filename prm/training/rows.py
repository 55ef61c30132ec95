"""Rows in TRL's stepwise-supervision form (``prompt``, ``completions``, ``labels``): check and load them.

One row is one solution: ``prompt`` the question, ``completions`` its steps, ``labels`` one per step (a bool
for hard labels, a float in [0, 1] for soft ones). Extra columns (``split``, ``problem_id``, ...) ride along.
Both the warehouse training set and rows read from a TRL export go through :func:`check_rows`, so a bad
row is refused the same way whatever its origin.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from prm.files import lone_surrogate_at, read_jsonl_lines
from prm.training.constants import SOFT_THRESHOLD, SPLITS

LABEL_KINDS = ("hard", "soft")
# datasets.DatasetDict keys that mean our split names.
_SPLIT_ALIASES = {"validation": "val", "valid": "val", "dev": "val"}


# The shape of one row, quoted by every message about a malformed one.
ROW_SHAPE = "{'prompt': str, 'completions': [str, ...], 'labels': [bool | float, ...]}"
_SHOWN_CHARS = 60  # how much of a bad value a message quotes


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 3] + "..."


def _where(at: str, row: Mapping[str, Any]) -> str:
    sid = row.get("solution_id")
    return at + (f" (solution {sid})" if sid is not None else "")


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


def check_rows(rows: Sequence[Mapping[str, Any]], label_kind: str, where: Sequence[str] | None = None) -> None:
    """Refuse rows a PRM cannot train on, naming the row and field: a row that is not a mapping, missing fields,
    ``completions`` or ``labels`` that are not lists, empty or blank steps, a label count that differs from the
    step count, and labels that are None, NaN, outside [0, 1] or soft for hard training.

    ``where`` names each row's origin (``rows.jsonl:3``, from :func:`locate_rows`); by default ``row i``.

    >>> check_rows([{"prompt": "1+1", "completions": [], "labels": []}], "hard")
    Traceback (most recent call last):
    ...
    ValueError: row 0: empty step list; every solution needs at least one step - drop it
    >>> check_rows([{"prompt": "q", "completions": "abc", "labels": [1, 1, 1]}], "hard", ["rows.jsonl:7"])
    Traceback (most recent call last):
    ...
    ValueError: rows.jsonl:7: field 'completions' is a str ('abc'), not a list of steps...
    """
    if label_kind not in LABEL_KINDS:
        raise ValueError(f"label_kind={label_kind!r} must be one of {LABEL_KINDS}")
    for i, row in enumerate(rows):
        at = where[i] if where is not None else f"row {i}"
        if not isinstance(row, Mapping):
            raise ValueError(f"{at}: a {type(row).__name__} ({_show(row)}), not a row object; each row is {ROW_SHAPE}")
        at = _where(at, row)
        missing = [k for k in ("prompt", "completions", "labels") if k not in row]
        if missing:
            raise ValueError(f"{at}: missing {missing}; rows follow TRL's stepwise supervision {ROW_SHAPE}")
        if not isinstance(row["prompt"], str) or not row["prompt"].strip():
            raise ValueError(f"{at}: field 'prompt' must be a non-empty string (the question), got "
                             f"{_show(row['prompt'])}")
        _check_encodable(row["prompt"], f"{at}: field 'prompt'")
        _check_steps(row["completions"], at)
        labels = row["labels"]
        if not isinstance(labels, list | tuple):
            raise ValueError(f"{at}: field 'labels' is a {type(labels).__name__} ({_show(labels)}), not a list; "
                             "give one label per step: a bool, or a float in [0, 1] for soft labels")
        if len(labels) != len(row["completions"]):
            raise ValueError(f"{at}: {len(row['completions'])} steps but {len(labels)} labels; give one label per "
                             "step")
        for k, label in enumerate(labels):
            check_label(label, label_kind, f"{at} labels[{k}]")
        if "split" in row and row["split"] not in SPLITS:
            raise ValueError(f"{at}: split {_show(row['split'])} is not one of {SPLITS}; fix the row's 'split' or "
                             "drop the field (rows without a split train)")


def _check_steps(steps: Any, at: str) -> None:
    """``completions`` is a non-empty list of steps with text (what :func:`prm.format.split_steps` returns)."""
    if not isinstance(steps, list | tuple):
        raise ValueError(f"{at}: field 'completions' is a {type(steps).__name__} ({_show(steps)}), not a list of "
                         "steps; give one string per step, e.g. ['2+3 = 5', '5*2 = 10'] "
                         "(prm.format.split_steps cuts a solution into steps)")
    if not steps:
        raise ValueError(f"{at}: empty step list; every solution needs at least one step - drop it")
    for k, step in enumerate(steps):
        if not isinstance(step, str):
            raise ValueError(f"{at}: completions[{k}] is a {type(step).__name__} ({_show(step)}); every step is a "
                             "string")
        if not step.strip():
            raise ValueError(f"{at}: completions[{k}] is {'empty' if not step else 'whitespace only'} "
                             f"({_show(step)}); every step needs text - drop the step or the solution "
                             "(prm.format.split_steps never yields blank steps)")
        _check_encodable(step, f"{at}: completions[{k}]")


def _check_encodable(text: str, what: str) -> None:
    """A lone surrogate (half of a UTF-16 pair) has no UTF-8 encoding: the tokenizer would fail on it mid-run."""
    at = lone_surrogate_at(text)
    if at is not None:
        raise ValueError(f"{what} holds a lone surrogate {text[at]!r} at character {at}, which no tokenizer can "
                         "encode (it is half of a UTF-16 pair, usually from bytes decoded with 'surrogateescape' "
                         "or a JSON '\\ud800' escape); fix the text where it was decoded, or replace it with "
                         "U+FFFD (prm.files.encodable.utf8_rows)")


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
    """Refuse training rows whose steps are all good or all bad: the PRM would learn a constant. The message
    names the cause each case has: all good means the policy never errs (make it err); all bad means no solution
    reaches the gold answer (make it reach it: more sampling would not help).

    >>> check_both_classes([{"labels": [False, False]}], "the train rows")
    Traceback (most recent call last):
    ...
    ValueError: the train rows: all 2 step labels are bad, so a PRM would learn a constant: ...
    """
    good, bad = class_counts(rows)
    if good and bad:
        return
    if good:
        raise ValueError(
            f"{what}: all {good} step labels are good, so a PRM would learn a constant: the policy never makes a "
            "mistake on these problems; add solutions with mistakes (sample at a higher temperature or on longer "
            "problems) or choose a label method that finds both"
        )
    raise ValueError(
        f"{what}: all {bad} step labels are bad, so a PRM would learn a constant: no solution or rollout reaches "
        "the gold answer (or none has an answer the extractor reads); give the policy an answer-format "
        "instruction (the prompt's `instruction`, e.g. 'End with: The answer is: <number>'), use a stronger "
        "policy, or easier problems - a higher temperature will not help"
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
    return locate_rows(source)[0]


def locate_rows(source: str | Path | Sequence[Mapping[str, Any]] | Any) -> tuple[list[Any], list[str]]:
    """:func:`load_rows`'s rows and where each came from, for :func:`check_rows`'s messages: ``rows.jsonl:3``
    (file and line), ``rows.parquet row 2``, ``train row 4`` (a DatasetDict split) or ``row 0`` (in memory).
    A JSONL line that does not parse or holds no object raises a ValueError naming the file and line.

    >>> locate_rows([{"prompt": "q", "completions": ["a"], "labels": [True]}])[1]
    ['row 0']
    """
    if isinstance(source, str | Path):
        return _load_path(Path(source))
    if hasattr(source, "keys") and hasattr(source, "column_names") and isinstance(source.column_names, dict):
        rows, where = [], []  # a DatasetDict: one split per key
        for name in source:
            split = _SPLIT_ALIASES.get(name, name)
            rows += [{**dict(r), "split": split} for r in source[name]]
            where += [f"{name} row {i}" for i in range(len(source[name]))]
        return rows, where
    rows = [dict(r) if isinstance(r, Mapping) else r for r in source]  # check_rows names a row that is no mapping
    return rows, [f"row {i}" for i in range(len(rows))]


def _load_path(path: Path) -> tuple[list[Any], list[str]]:
    if path.is_dir():
        if not any((path / f).is_file() for f in ("dataset_info.json", "state.json", "dataset_dict.json")):
            raise FileNotFoundError(f"{path} is not a datasets folder (no dataset_info.json or dataset_dict.json); "
                                    "pass a folder written by Dataset.save_to_disk, a .jsonl or a .parquet file")
        import datasets

        rows, where = locate_rows(datasets.load_from_disk(str(path)))
        return rows, [f"{path} {w}" for w in where]
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist; pass a datasets folder, a .jsonl or a .parquet file")
    if path.suffix == ".jsonl":
        located = read_jsonl_lines(path)
        return [row for _, row in located], [f"{path}:{n}" for n, _ in located]
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        rows = pq.read_table(path).to_pylist()
        return rows, [f"{path} row {i}" for i in range(len(rows))]
    raise ValueError(f"{path}: unknown row file type {path.suffix!r}; use .jsonl, .parquet or a datasets folder")
