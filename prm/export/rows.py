"""TRL stepwise-supervision rows: what every export starts from, and the checks each one passes first.

A row is ``{"prompt": str, "completions": [str, ...], "labels": [...]}`` (TRL's stepwise-supervision
format: one completion per step, one label per completion), optionally with ``problem_id`` and
``solution_id``. Labels are all hard (``bool``, True = good step) or all soft (a number in [0, 1], e.g. an
MC estimate) across the whole export: a column that mixes both cannot become one Arrow type, and a
trainer would read one as the other.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

REQUIRED_KEYS = ("prompt", "completions", "labels")
ID_KEYS = ("problem_id", "solution_id")  # optional, carried through every export that has room for them
HARD = "hard"
SOFT = "soft"


def label_kind(labels: Sequence[Any]) -> str:
    """``"hard"`` for bools, ``"soft"`` for numbers in [0, 1]; ValueError for anything else.

    >>> label_kind([True, False]), label_kind([0.25, 1])
    ('hard', 'soft')
    """
    if all(isinstance(x, bool) for x in labels):
        return HARD
    for x in labels:
        if isinstance(x, bool) or not isinstance(x, int | float):
            raise ValueError(f"label {x!r} mixes with other kinds: labels are all bools (hard) or all numbers "
                             "in [0, 1] (soft)")
        if math.isnan(x) or not 0.0 <= x <= 1.0:
            raise ValueError(f"soft label {x!r} is NaN or outside [0, 1]; soft labels are probabilities "
                             "that the step is good: fix or drop the row")
    return SOFT


def check_stepwise_rows(rows: Sequence[Mapping[str, Any]], where: str = "row") -> str:
    """Validate TRL stepwise rows; returns their label kind. Errors name the row and what to fix.

    >>> check_stepwise_rows([{"prompt": "1+1 =", "completions": ["1+1 = 2"], "labels": [True]}])
    'hard'
    >>> check_stepwise_rows([{"prompt": "1+1 =", "completions": [], "labels": []}])
    Traceback (most recent call last):
    ...
    ValueError: row 0: no completions; a stepwise row needs at least one step (drop empty solutions)
    """
    if not rows:
        raise ValueError("no rows to export; check the query that built them (no labels for this method?)")
    kinds: set[str] = set()
    keys = set(rows[0])
    for i, row in enumerate(rows):
        at = f"{where} {i}"
        missing = [k for k in REQUIRED_KEYS if k not in row]
        if missing:
            raise ValueError(f"{at}: missing {missing}; TRL stepwise rows have keys {list(REQUIRED_KEYS)}")
        if set(row) != keys:
            raise ValueError(f"{at}: keys {sorted(row)} differ from the first row's {sorted(keys)}; every row "
                             "needs the same keys to become one table")
        prompt, completions, labels = row["prompt"], row["completions"], row["labels"]
        if not isinstance(prompt, str):
            raise ValueError(f"{at}: prompt is {type(prompt).__name__}, expected str")
        if isinstance(completions, str) or not all(isinstance(c, str) for c in completions):
            raise ValueError(f"{at}: completions must be a list of step strings")
        if not completions:
            raise ValueError(f"{at}: no completions; a stepwise row needs at least one step (drop empty solutions)")
        if isinstance(labels, str | bytes) or len(labels) != len(completions):
            raise ValueError(f"{at}: {len(labels)} labels for {len(completions)} completions; one label per step")
        for key in ID_KEYS:
            if key in row and not isinstance(row[key], str):
                raise ValueError(f"{at}: {key} is {type(row[key]).__name__}, expected str")
        try:
            kinds.add(label_kind(labels))
        except ValueError as err:
            raise ValueError(f"{at}: {err}") from None
    if len(kinds) > 1:
        raise ValueError("rows mix hard (bool) and soft (number) labels; export one kind: hard labels from "
                         "step_labels.hard_label or soft ones from step_labels.soft_label")
    return kinds.pop()


def require_hard(rows: Sequence[Mapping[str, Any]], fmt: str) -> None:
    """Formats that store one mark per step (Math-Shepherd's +/-, ProcessBench's first error) need bools."""
    if check_stepwise_rows(rows) != HARD:
        raise ValueError(f"{fmt} stores hard labels, and these rows carry soft ones; export hard labels "
                         "(e.g. [p >= 0.5 for p in labels], or step_labels.hard_label) for this format")
