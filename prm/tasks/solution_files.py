"""Solution files users already have, read into typed records: ProcessBench rows (the published JSON array, JSONL,
or the hub dataset's Parquet), TRL stepwise rows, Math-Shepherd text rows, and plain question/steps JSONL.

A solution file is hostile input, and it is read whole or not at all: a structurally malformed row (not JSON,
not an object, a missing key, a wrong type, a label outside ``-1..len(steps)-1``, no steps) raises ValueError
with one line, ``<file>:<line>: what is wrong; what to do``. Two kinds of rows are set aside with a reason and
counted instead: a row with an empty or whitespace-only step (a step split gone wrong, which no PRM can score),
and a row whose id repeats an earlier row's (the first is kept).

Ids: ``problem_id`` is the id :func:`prm.tasks.load_problems` gives the question (``stable_id(source,
question.strip())``), so solutions join the problems table of the same source; ``solution_id`` is the file's id,
else ``stable_id("sol", problem_id, *steps)``.

No text is evaluated and no regex runs on it: rows are cut with ``str`` methods, linear in their length. The
Math-Shepherd layout is the one :mod:`prm.export.math_shepherd` writes; ``prm.tasks`` sits below ``prm.export``
in the data path (the layer contract in pyproject.toml), so its reader is restated here from the same
``CONVENTIONS["math-shepherd"]``, and tests/prm/test_solution_files.py round-trips the exporter's files.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from prm.files import json_kind
from prm.format import CONVENTIONS, first_error_of, segment, unescape_tag
from prm.tasks.dataset_rows import file_rows
from prm.tasks.datasets import RejectedRow, _gold, load_problems
from prm.tasks.records import stable_id
from prm.tasks.sources import is_source_name

SOLUTION_FORMATS = ("processbench", "trl", "math_shepherd", "plain")
PROCESSBENCH_KEYS = ("id", "problem", "steps", "label")
TRL_KEYS = ("prompt", "completions", "labels")
MATH_SHEPHERD_KEYS = ("input", "label")
QUESTION_KEYS = ("question", "problem")  # plain rows: the first one present
STEPS_KEYS = ("steps", "solution")  # plain rows: a list of steps, else a solution text cut by prm.format.segment
ID_KEYS = ("id", "solution_id")
GENERATOR_KEYS = ("generator", "model")
LAYOUTS = {
    "processbench": '{"id", "problem", "steps": [...], "label": <first wrong step, -1: all right>}',
    "trl": '{"prompt", "completions": [<step>, ...], "labels": [true, false, ...]}',
    "math_shepherd": '{"input": "<problem> Step 1: <step> ки\\nStep 2: ...", "label": <input with +/- per tag>}',
    "plain": '{"question" or "problem", "steps": [...] or "solution": "<text>", "answer"?, "label"?}',
}

_SHEPHERD = CONVENTIONS["math-shepherd"]
_TAG, _GOOD, _BAD = _SHEPHERD.step_tag, _SHEPHERD.good_token, _SHEPHERD.bad_token
_FIRST_STEP = " Step 1: "  # the question ends where the first numbered step begins
_SHOWN = 60  # characters of a bad value quoted in a message


@dataclass(frozen=True)
class SolutionRecord:
    """One solution of a file, typed: its question, steps, labels when the file has them, and its ids."""

    solution_id: str  # the file's id ("id" / "solution_id"), else stable_id("sol", problem_id, *steps)
    problem_id: str  # stable_id(source, question): the id load_problems gives the question for that source
    question: str  # whitespace-stripped, as in the problems table
    steps: tuple[str, ...]  # as written in the file
    generator: str | None  # "generator" / "model" of the row
    first_error: int | None  # the first wrong step; -1: all right; None: the row has no labels
    step_labels: tuple[bool | None, ...] | None  # per-step labels (TRL, Math-Shepherd); None otherwise
    final_answer_correct: bool | None
    gold_answer: str | None  # from the row (plain "answer") or attach_reference
    gold_solution: str | None
    line: int  # 1-based line (JSONL) or row index + 1 (JSON array, Parquet)


@dataclass(frozen=True)
class LoadedSolutions:
    """The solutions of one file, the rows set aside with their reasons, and counts."""

    path: str
    format: str  # one of SOLUTION_FORMATS
    records: tuple[SolutionRecord, ...]
    set_aside: tuple[RejectedRow, ...] = ()  # rows with an empty step or a repeated id
    source: str = ""  # prefix of the problem ids (rows with a "task" key use it when no source was given)
    n_read: int = 0  # rows read (at most `limit`)
    n_empty_steps: int = 0  # rows set aside because a step is empty or whitespace only
    n_repeated_ids: int = 0  # rows set aside because their solution_id repeats an earlier row's
    n_with_reference: int = 0  # records whose gold answer came from attach_reference

    def summary(self) -> str:
        """One line: what was read, kept, labelled and set aside."""
        labelled = [r for r in self.records if r.first_error is not None]
        all_right = sum(r.first_error == -1 for r in labelled)
        problems = len({r.problem_id for r in self.records})
        reference = f", {self.n_with_reference} with a reference answer" if self.n_with_reference else ""
        return (f"{self.path} ({self.format}): {len(self.records)} of {self.n_read} rows kept, {problems} problems, "
                f"{len(labelled)} labelled ({all_right} all right){reference}; {len(self.set_aside)} set aside "
                f"({self.n_empty_steps} with an empty step, {self.n_repeated_ids} with a repeated id)")


@dataclass(frozen=True)
class _Parsed:
    """What a format's parser reads from one row, before ids are given."""

    question: str
    steps: tuple[str, ...]
    file_id: str | None = None
    generator: str | None = None
    first_error: int | None = None
    step_labels: tuple[bool | None, ...] | None = None
    final_answer_correct: bool | None = None
    gold_answer: str | None = None
    gold_solution: str | None = None


# --- field checks: each raises ValueError("what is wrong; what to do"), the caller adds "<file>:<line>: " ---------


def _short(value: Any) -> str:
    """A bounded quote of a value from the file."""
    text = repr(value)
    return text if len(text) <= _SHOWN else f"{text[:_SHOWN]}...({len(text)} chars)"


def _missing(row: dict[str, Any], keys: tuple[str, ...], fmt: str) -> None:
    missing = [k for k in keys if row.get(k) is None]
    if missing:
        raise ValueError(f"missing {missing} (keys: {_keys(row)}); {fmt} rows are {LAYOUTS[fmt]}")


def _keys(row: dict[str, Any]) -> list[str]:
    return [str(k)[:40] for k in sorted(row, key=str)[:10]]


def _question(value: Any, key: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{key} is {_short(value) if isinstance(value, str) else json_kind(value)}; give the "
                         "question as a non-empty string")
    return value.strip()


def _step_list(value: Any, key: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(s, str) for s in value):
        if isinstance(value, list) and value:
            what = f"a list holding {json_kind(next(s for s in value if not isinstance(s, str)))}"
        else:
            what = "an empty list" if isinstance(value, list) else json_kind(value)
        raise ValueError(f"{key} must be a non-empty list of step strings, got {what}; split the solution into "
                         "steps (prm.format.split_steps) before writing the file")
    return tuple(value)


def _first_error(value: Any, n_steps: int, key: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not -1 <= value < n_steps:
        raise ValueError(f"{key} {_short(value)} is not -1 or a step index below {n_steps}; it is the first wrong "
                         "step's 0-based index, -1 when every step is right")
    return value


def _file_id(row: dict[str, Any]) -> str | None:
    key = next((k for k in ID_KEYS if row.get(k) is not None), None)
    if key is None:
        return None
    value = row[key]
    if isinstance(value, bool) or not isinstance(value, str | int) or not str(value).strip():
        raise ValueError(f"{key} {_short(value)} is not a non-empty string or an integer; give every row a unique id "
                         "or leave the key out")
    return str(value)


def _optional_text(row: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    key = next((k for k in keys if row.get(k) is not None), None)
    if key is None:
        return None
    if not isinstance(row[key], str):
        raise ValueError(f"{key} is {json_kind(row[key])}, expected a string or null; give it as text or leave it out")
    return row[key]


def _optional_bool(row: dict[str, Any], key: str) -> bool | None:
    value = row.get(key)
    if value is not None and not isinstance(value, bool):
        raise ValueError(f"{key} is {_short(value)}, expected true, false or null")
    return value


def _common(row: dict[str, Any]) -> dict[str, Any]:
    """The optional fields every format may carry."""
    return {"file_id": _file_id(row), "generator": _optional_text(row, GENERATOR_KEYS),
            "final_answer_correct": _optional_bool(row, "final_answer_correct")}


# --- one parser per format -----------------------------------------------------------------------------------------


def _processbench(row: dict[str, Any]) -> _Parsed:
    """A ProcessBench row (``Qwen/ProcessBench``; prm.export.processbench writes it); the checks of
    :func:`prm.export.read_processbench`, except that a repeated id is set aside by the caller."""
    _missing(row, PROCESSBENCH_KEYS, "processbench")
    steps = _step_list(row["steps"], "steps")
    return _Parsed(question=_question(row["problem"], "problem"), steps=steps,
                   first_error=_first_error(row["label"], len(steps), "label"), **_common(row))


def _trl(row: dict[str, Any]) -> _Parsed:
    """A TRL stepwise row with hard labels (prm.export.trl writes them)."""
    _missing(row, TRL_KEYS, "trl")
    steps = _step_list(row["completions"], "completions")
    labels = row["labels"]
    if not isinstance(labels, list) or len(labels) != len(steps):
        what = f"{len(labels)} labels" if isinstance(labels, list) else f"labels {json_kind(labels)}"
        raise ValueError(f"{what} for {len(steps)} completions; give one label per step")
    bad = next((x for x in labels if not isinstance(x, bool)), None)
    if bad is not None or any(x is None for x in labels):
        raise ValueError(f"label {_short(bad)} is not true/false; this reader takes hard labels (soft ones: "
                         "threshold them first, e.g. label >= 0.5)")
    return _Parsed(question=_question(row["prompt"], "prompt"), steps=steps, first_error=first_error_of(labels),
                   step_labels=tuple(labels), **_common(row))


def _shepherd_layout(problem: str, steps: list[str], marks: list[str]) -> str:
    return f"{problem} " + "\n".join(f"Step {k}: {step} {mark}" for k, (step, mark) in
                                     enumerate(zip(steps, marks, strict=True), 1))


def _math_shepherd(row: dict[str, Any]) -> _Parsed:
    """A Math-Shepherd ``{"input", "label"}`` row: prm.export.math_shepherd.from_math_shepherd's rule."""
    _missing(row, MATH_SHEPHERD_KEYS, "math_shepherd")
    text, label = row["input"], row["label"]
    for key, value in (("input", text), ("label", label)):
        if not isinstance(value, str):
            raise ValueError(f"{key} is {json_kind(value)}, not a string; math_shepherd rows are "
                             f"{LAYOUTS['math_shepherd']}")
    parts = text.split(f" {_TAG}")
    if len(parts) < 2 or parts[-1] != "":
        raise ValueError(f"input {_short(text[:_SHOWN])} does not end with a tagged step (' {_TAG}'); end every "
                         f"step with ' {_TAG}'")
    head, *rest = parts[:-1]
    cut = head.find(_FIRST_STEP)
    if cut < 0:
        raise ValueError(f"input {_short(text[:_SHOWN])} has no {_FIRST_STEP.strip()!r} after the problem; number "
                         "the steps 'Step 1: ', 'Step 2: ', ...")
    problem, steps = head[:cut], [head[cut + len(_FIRST_STEP):]]
    for k, part in enumerate(rest, 2):
        prefix = f"\nStep {k}: "
        if not part.startswith(prefix):
            raise ValueError(f"step {k} does not start with {prefix!r}; put each step on its own line, numbered")
        steps.append(part[len(prefix):])
    marks, offset = [], len(problem) + 1  # the label text: the same layout with one mark where each tag was
    for k, step in enumerate(steps, 1):
        offset += len(f"Step {k}: {step} ")
        marks.append(label[offset:offset + 1])
        offset += 2  # the mark and the newline
    if not set(marks) <= {_GOOD, _BAD} or label != _shepherd_layout(problem, steps, marks):
        raise ValueError(f"label {_short(label[:_SHOWN])} is not the input with each {_TAG!r} replaced by "
                         f"{_GOOD!r} or {_BAD!r}; write the label text that way")
    labels = [m == _GOOD for m in marks]
    return _Parsed(question=_question(unescape_tag(problem), "the input's problem"),
                   steps=tuple(unescape_tag(s) for s in steps), first_error=first_error_of(labels),
                   step_labels=tuple(labels), **_common(row))


def _plain(row: dict[str, Any]) -> _Parsed:
    """A plain row: a question, its steps (or a solution text cut by prm.format.segment), optional labels."""
    qkey = next((k for k in QUESTION_KEYS if row.get(k) is not None), None)
    skey = next((k for k in STEPS_KEYS if row.get(k) is not None), None)
    if qkey is None or skey is None:
        raise ValueError(f"missing {'question/problem' if qkey is None else 'steps/solution'} (keys: {_keys(row)}); "
                         f"plain rows are {LAYOUTS['plain']}")
    if skey == "steps":
        steps = _step_list(row["steps"], "steps")
    elif not isinstance(row["solution"], str):
        raise ValueError(f"solution is {json_kind(row['solution'])}; give the solution text as a string, or the "
                         "steps as a list under 'steps'")
    else:
        steps = segment(row["solution"]).steps
        if not steps:
            raise ValueError("solution holds no step (it is blank or only states the answer); write its steps one "
                             "per line or paragraph")
    labels = {k: _first_error(row.get(k), len(steps), k) for k in ("label", "first_error")}
    if None not in labels.values() and labels["label"] != labels["first_error"]:
        raise ValueError(f"label {labels['label']} and first_error {labels['first_error']} differ; keep one")
    gold_answer = gold_solution = None
    if row.get("answer") is not None:
        try:
            _, gold_solution, gold_answer = _gold({"answer": row["answer"]})
        except ValueError as exc:  # prm.tasks.datasets' rule for a gold answer; add what to do where it does not
            raise ValueError(str(exc) if "; " in str(exc) else f"{exc}; give 'answer' as the final answer (text or "
                             "a number) or a GSM8K solution ending in '#### <answer>'") from None
    return _Parsed(question=_question(row[qkey], qkey), steps=steps,
                   first_error=labels["label"] if labels["label"] is not None else labels["first_error"],
                   gold_answer=gold_answer, gold_solution=gold_solution, **_common(row))


_PARSERS: dict[str, Callable[[dict[str, Any]], _Parsed]] = {
    "processbench": _processbench, "trl": _trl, "math_shepherd": _math_shepherd, "plain": _plain}


# --- reading -------------------------------------------------------------------------------------------------------


def _format_of(keys: set[str]) -> str:
    """The format whose keys a row has; ValueError (without location) when none or several fit."""
    fits = [fmt for fmt, needed in (("processbench", PROCESSBENCH_KEYS), ("trl", TRL_KEYS),
                                    ("math_shepherd", MATH_SHEPHERD_KEYS)) if set(needed) <= keys]
    if not fits and keys & set(QUESTION_KEYS) and keys & set(STEPS_KEYS):
        fits = ["plain"]  # a ProcessBench row also has "problem" and "steps": that format is the more specific
    shown = [k[:40] for k in sorted(keys)[:10]]
    if not fits:
        layouts = "; ".join(f"{fmt}: {layout}" for fmt, layout in LAYOUTS.items())
        raise ValueError(f"keys {shown} fit no solution format ({layouts}); rename the keys to one of these")
    if len(fits) > 1:
        raise ValueError(f"keys {shown} fit several formats {fits}; pass fmt= one of them")
    return fits[0]


def _next_row_line(path: Path, after: int) -> int:
    """The first non-blank line after line ``after`` (where a row that failed to parse begins)."""
    with path.open("rb") as handle:
        for n, raw in enumerate(handle, 1):
            if n > after and raw.strip():
                return n
    return after + 1


def _rows(path: Path, limit: int | None = None) -> Iterator[tuple[int, Any]]:
    """``(line, row)`` of a local file (prm.tasks.dataset_rows), at most ``limit`` rows; a line that does not
    parse raises."""
    rows, line, n = file_rows(path), 0, 0
    while limit is None or n < limit:
        n += 1
        try:
            line, row, error = next(rows)
        except StopIteration:
            return
        except ValueError as exc:  # a JSON array or Parquet file that does not parse (file_rows reads rows alone)
            why = " ".join(str(exc).split())
            raise ValueError(f"{path}:{_next_row_line(path, line)}: the file {why.removeprefix(f'{path} ')}") from None
        if error is not None:
            raise ValueError(f"{path}:{line}: {error}")
        yield line, row


def _first_row(path: Path) -> tuple[int, Any]:
    for line, row in _rows(path):
        return line, row
    raise ValueError(f"{path}:1: the file holds no rows; write one solution object per line (JSONL), a JSON "
                     "array of them, or a Parquet table")


def _check_path(path: Path) -> None:
    if not path.is_file():
        raise FileNotFoundError(f"solution file {path} does not exist; pass a .jsonl, .json or .parquet file")


def detect_format(path: str | Path) -> str:
    """The format of a solution file (one of :data:`SOLUTION_FORMATS`), from its first row's keys.

    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "s.jsonl"
    >>> _ = path.write_text('{"prompt": "1+1?", "completions": ["1+1 = 2"], "labels": [true]}\\n')
    >>> detect_format(path)
    'trl'
    """
    path = Path(path)
    _check_path(path)
    line, row = _first_row(path)
    if not isinstance(row, dict):
        raise ValueError(f"{path}:{line}: {json_kind(row)}, not an object; every row is one solution object")
    try:
        return _format_of(set(row))
    except ValueError as exc:
        raise ValueError(f"{path}:{line}: {exc}") from None


def _row_source(row: dict[str, Any]) -> str | None:
    """A row's own "task" (Math-Shepherd's "GSM8K"/"MATH"), lower-cased, as the source of its problem id."""
    task = row.get("task")
    if task is None:
        return None
    if not isinstance(task, str) or not is_source_name(task.lower()):
        raise ValueError(f"task {_short(task)} cannot name a source (letters, digits, '_', '-', '.'); fix it or "
                         "pass source=")
    return task.lower()


def load_solutions(path: str | Path, *, fmt: str | None = None, source: str | None = None, task: str | None = None,
                   limit: int | None = None) -> LoadedSolutions:
    """Read a solution file (``fmt`` None: :func:`detect_format` on its first row) into :class:`SolutionRecord` s.

    ``source`` (else ``task``, else a row's own ``"task"`` key, else the file's stem: ``gsm8k.json`` ->
    ``gsm8k``) prefixes the problem ids: pass the source the problems were loaded under to join them. ``limit``
    caps the rows read. A malformed row raises ValueError naming the file and line; rows with an empty step or
    a repeated id are set aside (module docstring).

    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "gsm8k.jsonl"
    >>> _ = path.write_text('{"question": "1+1?", "solution": "1+1 = 2\\\\nAnswer: 2", "answer": "2", "label": -1}\\n')
    >>> loaded = load_solutions(path)
    >>> loaded.format, loaded.records[0].steps, loaded.records[0].first_error, loaded.records[0].problem_id
    ('plain', ('1+1 = 2',), -1, 'gsm8k-2c71358fd87e')
    """
    path = Path(path)
    _check_path(path)
    if fmt is not None and fmt not in SOLUTION_FORMATS:
        raise ValueError(f"format {fmt!r} is not one of {SOLUTION_FORMATS}; pass one of them or None to detect it")
    if limit is not None and limit < 1:
        raise ValueError(f"limit {limit} reads no row; pass a positive number or None")
    default_source = source or task or path.stem
    records: list[SolutionRecord] = []
    set_aside: list[RejectedRow] = []
    seen: dict[str, int] = {}
    n_read = n_empty = n_repeated = 0
    for line, row in _rows(path, limit):
        n_read += 1
        try:
            if not isinstance(row, dict):
                raise ValueError(f"{json_kind(row)}, not an object; every row is one solution object")
            fmt = fmt or _format_of(set(row))
            parsed = _PARSERS[fmt](row)
            row_source = source or task or _row_source(row) or default_source
        except ValueError as exc:
            raise ValueError(f"{path}:{line}: {exc}") from None
        empty = next((k for k, step in enumerate(parsed.steps) if not step.strip()), None)
        if empty is not None:
            n_empty += 1
            set_aside.append(RejectedRow(str(path), line, f"step {empty} of {len(parsed.steps)} is empty or only "
                                         "whitespace; fix the step split or drop the step"))
            continue
        problem_id = stable_id(row_source, parsed.question)
        solution_id = parsed.file_id or stable_id("sol", problem_id, *parsed.steps)
        if solution_id in seen:
            n_repeated += 1
            set_aside.append(RejectedRow(str(path), line, f"id {_short(solution_id)} repeats the id of line "
                                         f"{seen[solution_id]}, which is kept; give every solution a unique id"))
            continue
        seen[solution_id] = line
        records.append(SolutionRecord(
            solution_id=solution_id, problem_id=problem_id, question=parsed.question, steps=parsed.steps,
            generator=parsed.generator, first_error=parsed.first_error, step_labels=parsed.step_labels,
            final_answer_correct=parsed.final_answer_correct, gold_answer=parsed.gold_answer,
            gold_solution=parsed.gold_solution, line=line))
    if n_read == 0:
        _first_row(path)  # raises: the file holds no rows
    return LoadedSolutions(path=str(path), format=fmt or "", records=tuple(records), set_aside=tuple(set_aside),
                           source=default_source, n_read=n_read, n_empty_steps=n_empty, n_repeated_ids=n_repeated)


def attach_reference(loaded: LoadedSolutions, reference_path: str | Path) -> tuple[LoadedSolutions, int]:
    """Gold answers and solutions from a GSM8K- or MATH-style problem file (read by :func:`load_problems`),
    joined on the whitespace-stripped question; returns the new solutions and how many records matched.
    A matched record takes the reference's gold answer and solution; the others keep their own."""
    gold = {p.question.strip(): (p.gold_answer, p.gold_solution) for p in load_problems(reference_path).records}
    records, matched = [], 0
    for record in loaded.records:
        found = gold.get(record.question.strip())
        if found is not None:
            matched += 1
            record = replace(record, gold_answer=found[0], gold_solution=found[1])
        records.append(record)
    return replace(loaded, records=tuple(records), n_with_reference=matched), matched
