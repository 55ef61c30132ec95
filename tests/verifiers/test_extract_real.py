"""Extraction on real LLM text: the committed SmolLM2-135M-Instruct samples (no model needed to run this).

``tests/verifiers/data/smollm2_samples.jsonl`` holds 160 solutions sampled once by ``benchmarks/extraction.py
--generate`` (24 GSM8K + 16 MATH500 problems x 2 samples at temperature 0.7, with the bare question and with an
answer-format instruction). The extractor before "the answer is X" without a colon read an answer in 27.5% of them
and none graded right (benchmarks/results/extraction.log).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prm.format import segment
from verifiers import grade_answers
from verifiers.extract import extract_answer, is_answer_line

SAMPLES = Path(__file__).parent / "data" / "smollm2_samples.jsonl"


@pytest.fixture(scope="module")
def samples() -> list[dict]:
    return [json.loads(line) for line in SAMPLES.read_text().splitlines()]


def test_the_committed_file_is_what_the_benchmark_describes(samples: list[dict]) -> None:
    assert len(samples) == 160
    assert {(s["source"], s["variant"]) for s in samples} == {
        (src, var) for src in ("gsm8k", "math500") for var in ("bare", "instruction")}


def test_answers_are_extracted_from_most_smollm2_solutions(samples: list[dict]) -> None:
    answers = [extract_answer(s["text"]) for s in samples]
    share = sum(a is not None for a in answers) / len(samples)
    assert share >= 0.6, share  # 0.631 measured; the colon-only extractor read 0.275
    instructed = [a for a, s in zip(answers, samples, strict=True) if s["variant"] == "instruction"]
    assert sum(a is not None for a in instructed) / len(instructed) >= 0.75  # 0.80 measured (0.41 before)
    lenient = sum(extract_answer(s["text"], last_number=True) is not None for s in samples) / len(samples)
    assert lenient >= 0.95  # the last-number fallback reads nearly every text (0.975 measured)


def test_some_smollm2_solutions_grade_right(samples: list[dict]) -> None:
    """A 135M model is rarely right on GSM8K/MATH; before, none of its right answers was read (0 of 160)."""
    grades = grade_answers([(extract_answer(s["text"]), s["gold_answer"]) for s in samples])
    assert sum(g is True for g in grades) >= 3


def test_no_answer_line_is_left_as_a_step(samples: list[dict]) -> None:
    for s in samples:
        seg = segment(s["text"])
        assert not any(is_answer_line(seg.text, start, end) for start, end in seg.spans)
    endings = [s for s in samples if s["text"].rstrip().splitlines()[-1].lower().startswith("the answer is")]
    assert endings  # the samples do end on answer lines, with and without a colon
    for s in endings:  # the old rule only knew lines starting "Answer"/"Final answer"/"####": these were steps
        steps = segment(s["text"]).steps
        assert not steps or steps[-1] != s["text"].rstrip().splitlines()[-1].strip()
