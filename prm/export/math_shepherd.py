"""Math-Shepherd text rows: the problem, then ``Step k: <step> ки`` lines; the label puts ``+``/``-`` on the tag.

The layout is the one of the ``peiyi9979/Math-Shepherd`` dataset and of the input its PRM reads
(``f"{question} {output}"`` with ``output = "Step 1: ... ки\\nStep 2: ... ки"``, model card of
``peiyi9979/math-shepherd-mistral-7b-prm``); the label text is the input with each tag replaced by the
step's mark (TRL's ``examples/datasets/math_shepherd.py`` relies on the two lining up). The tag and marks
come from ``CONVENTIONS["math-shepherd"]``, so the export and the scorer cannot drift apart.

Steps are numbered here (``Step k: ``) whatever they already say, and the reader strips exactly that
prefix, so a round trip returns each step unchanged.

The tag inside the text: a problem or step that contains ``ки`` (``киев``, a step that starts with ``ки``) is
escaped by :func:`prm.format.tag_escape.escape_tag` (a WORD JOINER, U+2060, after its ``к``; joiners already
in the text doubled), so every ``ки`` in the file is a tag and every reader counts one per step;
:func:`read_math_shepherd` undoes the escape. The scorer reads the same escaped text
(:func:`math_shepherd_text`), so an exported input is exactly what the Math-Shepherd PRM scores.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from prm.export.rows import ID_KEYS, require_hard
from prm.files import json_kind, read_jsonl_lines, write_jsonl
from prm.format import CONVENTIONS, escape_tag, unescape_tag

CONVENTION = CONVENTIONS["math-shepherd"]
TAG = CONVENTION.step_tag  # "ки"
GOOD, BAD = CONVENTION.good_token, CONVENTION.bad_token  # "+", "-"
_FIRST_STEP = " Step 1: "  # the question ends where the first numbered step begins


def _check_text(problem: str) -> None:
    """Refuse a problem the reader could not split off: the layout puts a space after it, so one that ends with
    " Step 1:" (no trailing space) reads back as a shorter problem plus a step, as does one holding " Step 1: "."""
    if _FIRST_STEP in f"{problem} ":
        raise ValueError(f"the problem contains {_FIRST_STEP.strip()!r}, so the Math-Shepherd text could not be "
                         "split back into problem and steps; reword the problem or export it in TRL format")


def _layout(problem: str, steps: Sequence[str], tags: Sequence[str]) -> str:
    """Problem and steps (already escaped) with ``tags[k]`` after step ``k``."""
    return f"{problem} " + "\n".join(f"Step {k}: {step} {tag}" for k, (step, tag) in enumerate(zip(steps, tags,
                                                                                                     strict=True), 1))


def math_shepherd_text(problem: str, steps: Sequence[str], marks: Sequence[str] | None = None) -> str:
    """The Math-Shepherd input (``marks=None``: the tag after every step) or its label text (one mark a step),
    with the tag escaped inside the problem and steps (module docstring).

    >>> math_shepherd_text("1+2*3 =", ["2*3 = 6", "1+6 = 7"])
    '1+2*3 = Step 1: 2*3 = 6 ки\\nStep 2: 1+6 = 7 ки'
    >>> math_shepherd_text("1+2*3 =", ["2*3 = 6", "1+6 = 8"], ["+", "-"])
    '1+2*3 = Step 1: 2*3 = 6 +\\nStep 2: 1+6 = 8 -'
    >>> math_shepherd_text("Где киев?", ["ки"]) == "Где к\\u2060иев? Step 1: к\\u2060и ки"
    True
    """
    tags = [TAG] * len(steps) if marks is None else list(marks)
    return _layout(escape_tag(problem, TAG), [escape_tag(step, TAG) for step in steps], tags)


def to_math_shepherd(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """TRL stepwise rows (hard labels) -> ``{"input", "label"}`` rows, ids carried along when present."""
    require_hard(rows, "Math-Shepherd text")
    out = []
    for row in rows:
        _check_text(row["prompt"])
        marks = [GOOD if ok else BAD for ok in row["labels"]]
        item = {"input": math_shepherd_text(row["prompt"], row["completions"]),
                "label": math_shepherd_text(row["prompt"], row["completions"], marks)}
        out.append(item | {k: row[k] for k in ID_KEYS if k in row})
    return out


def from_math_shepherd(item: Mapping[str, Any]) -> dict[str, Any]:
    """One ``{"input", "label"}`` row -> a TRL stepwise row; ValueError when it is not in this layout."""
    text, label = item["input"], item["label"]
    for key, value in (("input", text), ("label", label)):
        if not isinstance(value, str):
            raise ValueError(f"{key!r} is {json_kind(value)}, not a string; a Math-Shepherd row is "
                             f"{{\"input\": \"<problem> Step 1: <step> {TAG}...\", \"label\": \"<the input with "
                             f"{GOOD!r}/{BAD!r} for each tag>\"}}")
    parts = text.split(f" {TAG}")
    if len(parts) < 2 or parts[-1] != "":
        raise ValueError(f"input {text[:60]!r} does not end with a tagged step (' {TAG}')")
    head, *rest = parts[:-1]
    cut = head.find(_FIRST_STEP)
    if cut < 0:
        raise ValueError(f"input {text[:60]!r} has no {_FIRST_STEP.strip()!r} after the problem")
    problem, steps = head[:cut], [head[cut + len(_FIRST_STEP):]]
    for k, part in enumerate(rest, 2):
        prefix = f"\nStep {k}: "
        if not part.startswith(prefix):
            raise ValueError(f"step {k} of {text[:60]!r} does not start with {prefix!r}")
        steps.append(part[len(prefix):])
    # The label text has the same layout with a one-character mark where each tag was: walk it step by step.
    marks, offset = [], len(problem) + 1
    for k, step in enumerate(steps, 1):
        offset += len(f"Step {k}: {step} ")
        marks.append(label[offset : offset + 1])
        offset += 2  # the mark and the newline
    if label != _layout(problem, steps, marks) or not set(marks) <= {GOOD, BAD}:
        raise ValueError(f"label {label[:60]!r} is not the input with each tag replaced by {GOOD!r} or {BAD!r}")
    return {"prompt": unescape_tag(problem), "completions": [unescape_tag(s) for s in steps],
            "labels": [m == GOOD for m in marks]} | {k: item[k] for k in ID_KEYS if k in item}


def write_math_shepherd(rows: Sequence[Mapping[str, Any]], path: str | Path) -> Path:
    """Write TRL stepwise rows (hard labels) as Math-Shepherd JSONL, atomically.

    >>> import tempfile, pathlib
    >>> out = pathlib.Path(tempfile.mkdtemp()) / "ms.jsonl"
    >>> rows = [{"prompt": "2+3 =", "completions": ["2+3 = 5", "Answer: 6"], "labels": [True, False]}]
    >>> read_math_shepherd(write_math_shepherd(rows, out)) == rows
    True
    """
    return write_jsonl(to_math_shepherd(rows), path)


def read_math_shepherd(path: str | Path) -> list[dict[str, Any]]:
    """A Math-Shepherd JSONL export read back as TRL stepwise rows."""
    rows = []
    for n, item in read_jsonl_lines(path):
        try:
            rows.append(from_math_shepherd(item))
        except KeyError as err:
            raise ValueError(f"{path}:{n}: no {err} key; a Math-Shepherd row holds \"input\" and \"label\" "
                             "strings (write_math_shepherd writes them)") from None
        except ValueError as err:
            raise ValueError(f"{path}:{n}: {err}") from None
    return rows
