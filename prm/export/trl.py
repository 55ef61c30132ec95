"""TRL stepwise supervision: a JSONL file or a ``datasets`` folder, and the reader the PRM trainer uses.

Any tool that reads TRL's stepwise-supervision format (``prompt``, ``completions``, ``labels``; see
``trl-lib/math_shepherd``) reads these exports, and ``prm.training`` trains from them through
:func:`read_trl_stepwise`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from prm.export.rows import check_stepwise_rows
from prm.files import atomic_write_dir, read_jsonl, utf8_rows, write_jsonl


def write_trl_stepwise(rows: Sequence[Mapping[str, Any]], path: str | Path) -> Path:
    """Write TRL stepwise rows as JSONL (atomically), after :func:`check_stepwise_rows`.

    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "train.jsonl"
    >>> rows = [{"prompt": "2+3 =", "completions": ["2+3 = 5", "Answer: 6"], "labels": [True, False]}]
    >>> read_trl_stepwise(write_trl_stepwise(rows, out)) == rows
    True
    """
    check_stepwise_rows(rows)
    return write_jsonl(rows, path)


def save_dataset(rows: Sequence[Mapping[str, Any]], folder: str | Path) -> Path:
    """``Dataset.from_list(rows).save_to_disk`` into ``folder``, swapped in atomically; lone surrogates become
    U+FFFD (:func:`prm.files.encodable.utf8_rows`)."""
    from datasets import Dataset

    check_stepwise_rows(rows)
    dataset = Dataset.from_list(utf8_rows(rows, f"{folder} rows"))
    return atomic_write_dir(folder, lambda tmp: dataset.save_to_disk(str(tmp)))


def read_trl_stepwise(path: str | Path) -> list[dict[str, Any]]:
    """TRL stepwise rows from a JSONL export or a ``save_to_disk`` folder, validated.

    Raises ValueError naming the row when one is malformed (lengths differ, no steps, a NaN or
    out-of-range soft label, hard and soft labels mixed): training on it would silently learn noise.
    """
    path = Path(path)
    if path.is_dir():
        from datasets import load_from_disk

        data = load_from_disk(str(path))
        if not hasattr(data, "to_list"):
            raise ValueError(f"{path} holds a DatasetDict with splits {list(data)}; pass one split's folder, "
                             f"e.g. {path / next(iter(data))}")
        rows = data.to_list()
    else:
        rows = read_jsonl(path)
    check_stepwise_rows(rows, where=f"{path} row")
    return rows
