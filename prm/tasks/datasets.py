"""Load GSM8K/MATH-style datasets (local JSONL/JSON/Parquet or a hub name) row by row.

A dropped-in file is hostile input: every row is checked on its own, a bad row is rejected with its file
and line (and counted), the good rows are kept, and a repeated question is kept once. Only a file with no
usable row at all is an error.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prm.files import json_kind
from prm.format import split_steps
from prm.tasks.dataset_rows import Row, file_rows
from prm.tasks.records import ProblemRecord, stable_id
from verifiers import extract_answer

QUESTION_FIELDS = ("question", "problem", "prompt")
META_FIELDS = ("subject", "level", "unique_id")  # MATH's, kept in the record's meta
FILE_SUFFIXES: tuple[str, ...] = (".jsonl", ".json", ".parquet")
# An `answer` without a '####' line and without a `solution` is taken as the final answer only when it
# looks like one: a single line of at most this many characters. MATH500's longest answer has 53; every
# GSM8K solution paragraph (train and test, 8,792 rows) spans several lines, so one missing its '####'
# line is rejected instead of becoming a gold answer no model output can ever match.
MAX_BARE_ANSWER_CHARS = 64
# Rejections quoted in the error raised when no row of a file is usable.
_QUOTED_REJECTIONS = 5
_CALCULATOR = re.compile(r"<<[^<>]*>>")


@dataclass(frozen=True)
class RejectedRow:
    """A row left out of a load, with where it is and why."""

    file: str  # the file path (or hub dataset name) it came from
    line: int  # 1-based line of a JSONL file; row number in a JSON array, Parquet file or hub split
    reason: str  # what is wrong with it and what to change

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.reason}"


@dataclass(frozen=True)
class LoadedProblems:
    """The usable problems of one dataset and the rows left out of it."""

    records: tuple[ProblemRecord, ...]
    rejected: tuple[RejectedRow, ...] = ()  # rows unreadable, or with no question or no extractable gold answer
    duplicates: tuple[RejectedRow, ...] = ()  # rows repeating an earlier question (the first one is kept)


def normalize_gsm8k_answer(answer_field: str) -> tuple[str, str]:
    """Split a GSM8K ``answer`` field into (solution text, gold answer).

    >>> normalize_gsm8k_answer("48/2 = <<48/2=24>>24 clips\\n#### 1,024")
    ('48/2 = <<48/2=24>>24 clips', '1024')
    """
    body, sep, gold = answer_field.rpartition("####")
    if not sep:
        raise ValueError("GSM8K answer has no '#### <number>' line")
    return body.strip(), gold.strip().replace(",", "")


def strip_calculator_annotations(text: str) -> str:
    """Remove GSM8K ``<<48/2=24>>`` annotations (kept in the warehouse for the SymPy verifier)."""
    return _CALCULATOR.sub("", text)


def _text_field(row: dict, name: str) -> str | None:
    value = row.get(name)
    if value is None or isinstance(value, str):
        return value
    raise ValueError(f"field {name!r} is {type(value).__name__} ({value!r:.40}), expected text")


def _gold(row: dict) -> tuple[str, str | None, str]:
    """(task, gold solution, gold answer) of a row, or ValueError saying why none can be extracted."""
    answer, solution = row.get("answer"), _text_field(row, "solution")
    if isinstance(answer, bool) or (answer is not None and not isinstance(answer, str | int | float)):
        raise ValueError(f"field 'answer' is {type(answer).__name__}, expected text or a number")
    if isinstance(answer, float) and not math.isfinite(answer):
        raise ValueError(f"field 'answer' is {answer}, expected a finite number")
    if isinstance(answer, str) and "####" in answer:
        body, gold = normalize_gsm8k_answer(answer)
        if not gold:
            raise ValueError("the '####' line of 'answer' is empty; put the final answer after '####'")
        return "gsm8k", body, gold
    if solution is not None:  # MATH: `answer` field, else the solution's \boxed{} or 'Answer:' line
        gold = str(answer).strip() if answer is not None and str(answer).strip() else extract_answer(solution)
        if gold is None:
            raise ValueError("no gold answer: no 'answer' field and no \\boxed{} or 'Answer:' line in 'solution'")
        return "math", solution, gold
    if answer is None or not str(answer).strip():
        raise ValueError("no gold answer: give 'answer' (GSM8K: solution ending in '#### <answer>') or 'solution'")
    text = str(answer).strip()
    if "\n" in text or len(text) > MAX_BARE_ANSWER_CHARS:
        raise ValueError(
            f"'answer' is a {len(text)}-character solution without a '#### <answer>' line, so its final answer "
            "cannot be extracted; end it with '#### <final answer>' (GSM8K) or move it to 'solution' and put "
            "the final answer alone in 'answer' (MATH)"
        )
    return "math", None, text


def _scalar(row: dict, name: str) -> str | int | float | bool:
    value = row[name]
    if isinstance(value, str | int | float):  # bool is an int
        return value
    raise ValueError(f"field {name!r} is {json_kind(value)}, expected text or a number; flatten it or drop it")


def _record(row: Any, source: str, split: str) -> ProblemRecord:
    """The record of one dataset row; ValueError says what is wrong with the row."""
    if not isinstance(row, dict):
        raise ValueError(f"row is a JSON {type(row).__name__}, expected an object with 'question' and 'answer'")
    name = next((f for f in QUESTION_FIELDS if row.get(f) not in (None, "")), None)
    if name is None:
        raise ValueError(f"row has none of the question fields {QUESTION_FIELDS}: keys {sorted(row)[:10]}")
    question = (_text_field(row, name) or "").strip()
    if not question:
        raise ValueError(f"field {name!r} is empty")
    task, solution, gold = _gold(row)
    n_steps = len(split_steps(solution)) if solution else None
    meta = {k: _scalar(row, k) for k in META_FIELDS if row.get(k) is not None}
    return ProblemRecord(
        problem_id=stable_id(source, question),
        task=task,
        split=split,
        question=question,
        gold_answer=gold.strip(),
        gold_solution=solution,
        n_gold_steps=n_steps,
        difficulty=str(row["level"]) if row.get("level") is not None else None,
        meta=meta,
    )


def _hub_rows(name: str, hub_config: str | None, split: str) -> Iterator[Row]:
    import datasets

    ds = datasets.load_dataset(name, hub_config, split=split)
    yield from ((i, dict(row), None) for i, row in enumerate(ds, start=1))


def load_problems(
    path_or_name: str | Path,
    *,
    source: str | None = None,
    split: str = "test",
    hub_config: str | None = None,
    limit: int | None = None,
) -> LoadedProblems:
    """Load GSM8K- or MATH-style problems, normalise their gold answers, set bad and repeated rows aside.

    ``path_or_name`` is a local ``.jsonl``/``.json``/``.parquet`` file or a hub dataset name (e.g.
    ``"openai/gsm8k"`` with ``hub_config="main"``, for users with internet). ``limit`` caps the rows read.
    Raises ValueError, naming the file and the first rejected rows, when no row is usable.

    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "mini.jsonl"
    >>> _ = path.write_text('{"question": "1+1?", "answer": "1+1=2\\\\n#### 2"}\\n{"question": 3}\\n')
    >>> loaded = load_problems(path)
    >>> [r.gold_answer for r in loaded.records], [r.line for r in loaded.rejected]
    (['2'], [2])
    """
    path = Path(path_or_name)
    if path.suffix in FILE_SUFFIXES:
        if not path.is_file():
            raise FileNotFoundError(f"dataset file {path} does not exist; pass a local file or a hub name")
        rows, source, label = file_rows(path), source or path.parent.name or path.stem, str(path)
    else:
        label = str(path_or_name)
        rows, source = _hub_rows(label, hub_config, split), source or label.split("/")[-1]
    records: dict[str, tuple[int, ProblemRecord]] = {}
    rejected: list[RejectedRow] = []
    duplicates: list[RejectedRow] = []
    for n_read, (line, row, error) in enumerate(rows, start=1):
        if limit is not None and n_read > limit:
            break
        try:
            if error is not None:
                raise ValueError(error)
            record = _record(row, source, split)
        except ValueError as exc:
            rejected.append(RejectedRow(label, line, str(exc)))
            continue
        except RecursionError:  # read at a shallower stack than a check of it ran at
            rejected.append(RejectedRow(label, line, "JSON nested too deeply to check; a row is an object of text "
                                        "and numbers"))
            continue
        if record.problem_id in records:
            duplicates.append(RejectedRow(label, line, f"repeats the question of line {records[record.problem_id][0]}"))
            continue
        records[record.problem_id] = (line, record)
    if not records:
        what = "is empty" if not rejected else f"has no usable row ({len(rejected)} rejected)"
        quoted = "; ".join(str(r) for r in rejected[:_QUOTED_REJECTIONS])
        raise ValueError(f"dataset {label} {what}{': ' + quoted if quoted else ''}; write one JSON object per line "
                         "with 'question' and 'answer' (GSM8K) or 'problem', 'solution' and 'answer' (MATH)")
    return LoadedProblems(records=tuple(r for _, r in records.values()), rejected=tuple(rejected),
                          duplicates=tuple(duplicates))
