"""Load GSM8K/MATH-style datasets (local JSONL/Parquet or a hub name) through ``datasets``."""

from __future__ import annotations

import re
from pathlib import Path

from prm.tasks.records import ProblemRecord, stable_id
from prm.tasks.segment import split_steps
from verifiers.extract import extract_answer

QUESTION_FIELDS = ("question", "problem", "prompt")
_CALCULATOR = re.compile(r"<<[^<>]*>>")


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


def _record(row: dict, source: str, split: str) -> ProblemRecord:
    question = next((row[f] for f in QUESTION_FIELDS if row.get(f)), None)
    if question is None:
        raise ValueError(f"row has none of the question fields {QUESTION_FIELDS}: keys {sorted(row)}")
    solution, gold = None, None
    if isinstance(row.get("answer"), str) and "####" in row["answer"]:
        task = "gsm8k"
        solution, gold = normalize_gsm8k_answer(row["answer"])
    else:
        task = "math"
        solution = row.get("solution")
        gold = row.get("answer") or (extract_answer(solution) if solution else None)
    if gold is None or str(gold).strip() == "":
        raise ValueError("row has no gold answer: no 'answer' field and no \\boxed{} in 'solution'")
    separator = "\n" if task == "gsm8k" else "\n\n"
    n_steps = len(split_steps(solution, separator)) if solution else None
    meta = {k: row[k] for k in ("subject", "level", "unique_id") if row.get(k) is not None}
    return ProblemRecord(
        problem_id=stable_id(source, question),
        task=task,
        split=split,
        question=question.strip(),
        gold_answer=str(gold).strip(),
        gold_solution=solution,
        n_gold_steps=n_steps,
        difficulty=str(row["level"]) if row.get("level") is not None else None,
        meta=meta,
    )


def load_problems(
    path_or_name: str | Path,
    *,
    source: str | None = None,
    split: str = "test",
    hub_config: str | None = None,
    limit: int | None = None,
) -> list[ProblemRecord]:
    """Load GSM8K- or MATH-style problems and normalise their gold answers.

    ``path_or_name`` is a local ``.jsonl``/``.json``/``.parquet`` file or a hub dataset name
    (e.g. ``"openai/gsm8k"`` with ``hub_config="main"``, for users with internet).
    """
    import datasets

    path = Path(path_or_name)
    if path.suffix in {".jsonl", ".json", ".parquet"}:
        if not path.exists():
            raise FileNotFoundError(f"dataset file {path} does not exist; pass a local file or a hub name")
        builder = "parquet" if path.suffix == ".parquet" else "json"
        ds = datasets.load_dataset(builder, data_files=str(path), split="train")
        source = source or path.parent.name or path.stem
    else:
        ds = datasets.load_dataset(str(path_or_name), hub_config, split=split)
        source = source or str(path_or_name).split("/")[-1]
    if limit is not None:
        ds = ds.select(range(min(limit, len(ds))))
    return [_record(dict(row), source, split) for row in ds]
