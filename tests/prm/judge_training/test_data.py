"""Judge training rows: the verdict the judge learns parses back to the exact first error through the judge's own
parser, and balancing keeps right and wrong solutions level."""

from __future__ import annotations

import pytest

from prm.judge_training.data import JudgeExample, balance, examples, verdict_text
from prm.labeling.judge import judge_prompt, parse_vote
from prm.tasks.arithmetic import ArithmeticConfig, first_error_index, generate_problems


@pytest.mark.parametrize("style", ["word", "chain"])
def test_every_verdict_parses_back_to_its_first_error(style: str) -> None:
    problem = generate_problems(1, ArithmeticConfig(n_ops=4, style=style), seed=5)[0]
    gold = list(problem.gold_steps)
    variants = [gold, gold[:2], [gold[0], "1+1 = 3", *gold[2:]], ["hello", *gold[1:]], [*gold, "9+9 = 18"]]
    for steps in variants:
        first = first_error_index(problem, steps)
        text = verdict_text(problem, steps, first)
        assert parse_vote(text, len(steps)).index == first
        assert text.count("\n") == (len(steps) if first < 0 else first + 1)  # a line per checked step, then the index


def test_examples_use_the_judge_prompt_and_skip_empty_samples() -> None:
    problem = generate_problems(1, ArithmeticConfig(n_ops=2, style="word"), seed=3)[0]
    rows = examples([problem], [["8+19 = 27\n27-18 = 19\nAnswer: 19", "", "Answer: 9"]])
    assert len(rows) == 1 and rows[0].first_error == 1 and rows[0].n_steps == 2
    assert rows[0].prompt == judge_prompt(problem.question, ["8+19 = 27", "27-18 = 19"])


def test_balance_levels_right_and_wrong_and_spreads_positions() -> None:
    rows = [JudgeExample("p", "q", ("s",) * 8, "t", e) for e in [-1] * 10 + [0] * 8 + [3] * 2 + [5] * 1]
    kept = balance(rows, seed=1)
    errors = sorted(r.first_error for r in kept)
    assert errors.count(-1) == 10 and len(errors) == 20
    assert errors.count(3) == 2 and errors.count(5) == 1 and errors.count(0) == 7  # rare positions give all they have
    assert balance(rows, seed=1) == kept and balance(rows, seed=2) != kept
