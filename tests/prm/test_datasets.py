"""GSM8K and MATH500 loading from ../shared/data, answer normalisation, and generated sources."""

from __future__ import annotations

import json

import pytest

from prm.tasks import ArithmeticSourceConfig, generate_arithmetic, load_problems, split_steps
from prm.tasks.datasets import normalize_gsm8k_answer, strip_calculator_annotations
from verifiers import extract_answer


def test_gsm8k_loads_with_normalised_answers(shared_file) -> None:
    problems = load_problems(shared_file("gsm8k/test.jsonl"))
    assert len(problems) == 1319
    first = problems[0]
    assert first.task == "gsm8k" and first.gold_answer == "18"
    assert first.problem_id.startswith("gsm8k-")
    assert len({p.problem_id for p in problems}) == len(problems)
    assert all(p.gold_answer.lstrip("-").replace(".", "").isdigit() for p in problems)
    assert "####" not in first.gold_solution


def test_math500_loads_with_its_answer_field(shared_file) -> None:
    problems = load_problems(shared_file("math500/test.jsonl"))
    assert len(problems) == 500
    first = problems[0]
    assert first.task == "math"
    assert first.gold_answer == r"\left( 3, \frac{\pi}{2} \right)"
    assert json.loads(json.dumps(first.meta))["subject"] == "Precalculus"


def test_limit_and_missing_file(tmp_path, shared_file) -> None:
    assert len(load_problems(shared_file("gsm8k/test.jsonl"), limit=5)) == 5
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_problems(tmp_path / "missing.jsonl")


def test_a_local_jsonl_without_answers_is_a_clear_error(tmp_path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"question": "2+2?", "solution": "it is four"}) + "\n")
    with pytest.raises(ValueError, match="no gold answer"):
        load_problems(path)


def test_extraction_recovers_every_gsm8k_gold_answer(shared_file) -> None:
    for line in shared_file("gsm8k/test.jsonl").read_text().splitlines():
        answer = json.loads(line)["answer"]
        assert extract_answer(answer) == normalize_gsm8k_answer(answer)[1]


def test_extraction_recovers_math500_boxed_answers(shared_file) -> None:
    rows = [json.loads(line) for line in shared_file("math500/test.jsonl").read_text().splitlines()]
    boxed = [r for r in rows if "\\boxed" in r["solution"]]
    assert len(boxed) >= 490
    # The dataset's `answer` field is the last boxed expression of the solution, up to spacing.
    mismatches = [r for r in boxed if extract_answer(r["solution"]).replace(" ", "") != r["answer"].replace(" ", "")]
    assert len(mismatches) <= 10, [(extract_answer(r["solution"]), r["answer"]) for r in mismatches[:5]]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("12+7 = 19\nAnswer: 19", "19"),
        ("Final answer: 3/4.", "3/4"),
        ("The answer is: $42$", "42"),
        (r"so $\boxed{\frac{1}{2}}$ and Answer: 3", r"\frac{1}{2}"),
        (r"\boxed{x^{2}+1}", "x^{2}+1"),
        ("She pays 5*3=<<5*3=15>>15\n#### 1,500", "1500"),
        (r"\boxed{unbalanced", None),
        ("", None),
        ("Answer:", None),
    ],
)
def test_extract_answer_table(text: str, expected: str | None) -> None:
    assert extract_answer(text) == expected


def test_gsm8k_helpers() -> None:
    assert strip_calculator_annotations("48/2 = <<48/2=24>>24") == "48/2 = 24"
    with pytest.raises(ValueError, match="####"):
        normalize_gsm8k_answer("no marker")


def test_generated_sources_are_seeded_and_carry_ground_truth() -> None:
    config = ArithmeticSourceConfig(n_ops=(2, 8), styles=("chain", "word"), per_level=5)
    first, again = generate_arithmetic(config, seed=3), generate_arithmetic(config, seed=3)
    assert [r.problem_id for r in first] == [r.problem_id for r in again]
    assert first != generate_arithmetic(config, seed=4)
    for record in first:
        steps = split_steps(record.gold_solution)
        assert len(steps) == record.n_gold_steps == len(record.meta["intermediates"])
        assert extract_answer(record.gold_solution) == record.gold_answer == str(record.meta["intermediates"][-1])
    assert {r.task for r in first} == {"arith_chain", "arith_word"}
