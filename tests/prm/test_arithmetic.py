"""The arithmetic generator and its exact step checker."""

from __future__ import annotations

import re

import pytest

from prm.format import split_steps
from prm.tasks.arithmetic import (
    ArithmeticConfig,
    ArithmeticProblem,
    first_error_index,
    generate_problems,
    parse_expression,
    step_truth,
)
from verifiers import extract_answer as final_answer

CHAIN = ArithmeticProblem(
    problem_id="arith-test-chain",
    style="chain",
    question="Evaluate 3-7+2*5 one step per line.",
    expression="3-7+2*5",
    gold_steps=("3-7+2*5 = 3-7+10", "3-7+10 = -4+10", "-4+10 = 6"),
    intermediates=(10, -4, 6),
    answer=6,
)
WORD = ArithmeticProblem(
    problem_id="arith-test-word",
    style="word",
    question="Mia starts with 12 points. She wins 7. She loses 3. She multiplies the points by 2.",
    expression="(12+7-3)*2",
    gold_steps=("12+7 = 19", "19-3 = 16", "16*2 = 32"),
    intermediates=(19, 16, 32),
    answer=32,
)


# --- generation --------------------------------------------------------------------------------------


@pytest.mark.parametrize("style", ["chain", "word"])
def test_generation_is_deterministic_and_prefix_stable(style: str) -> None:
    config = ArithmeticConfig(n_ops=5, style=style)
    first = generate_problems(20, config, seed=7)
    assert first == generate_problems(20, config, seed=7)
    assert first[:5] == generate_problems(5, config, seed=7)
    assert first != generate_problems(20, config, seed=8)


@pytest.mark.parametrize("style", ["chain", "word"])
@pytest.mark.parametrize("n_ops", [1, 2, 5, 8])
@pytest.mark.parametrize("operators", ["+-*", "+", "-", "*", "+-"])
def test_gold_solutions_are_true_and_reach_the_answer(style: str, n_ops: int, operators: str) -> None:
    for problem in generate_problems(25, ArithmeticConfig(n_ops=n_ops, operators=operators, style=style), 3):
        assert step_truth(problem, problem.gold_steps) == [True] * n_ops
        assert first_error_index(problem, problem.gold_steps) == -1
        assert parse_expression(problem.expression)[0] == problem.answer
        assert problem.intermediates[-1] == problem.answer
        assert parse_expression(problem.gold_steps[-1].split("=")[1])[0] == problem.answer
        solution = problem.gold_solution()
        assert split_steps(solution) == list(problem.gold_steps)
        assert final_answer(solution) == str(problem.answer)
        assert re.fullmatch(r"arith-[0-9a-f]{12}", problem.problem_id)


def test_chain_gold_steps_reduce_one_operation_and_chain_lhs_to_rhs() -> None:
    for problem in generate_problems(50, ArithmeticConfig(n_ops=6), seed=0):
        state = problem.expression
        for n_left, step in zip(range(5, -1, -1), problem.gold_steps, strict=True):
            lhs, rhs = step.split(" = ")
            assert lhs == state
            assert parse_expression(rhs)[1] == n_left
            state = rhs
        assert problem.question.split()[1] == problem.expression


@pytest.mark.parametrize(
    ("config", "check"),
    [
        (ArithmeticConfig(n_ops=8), lambda p: len(p.gold_steps) == 8),
        (ArithmeticConfig(n_ops=3, operators="+"), lambda p: set(re.findall(r"[-+*]", p.expression)) == {"+"}),
        (ArithmeticConfig(n_ops=3, operators="*"), lambda p: "+" not in p.expression and "-" not in p.expression),
        (
            ArithmeticConfig(n_ops=4, min_value=5, max_value=9),
            lambda p: all(5 <= int(n) <= 9 for n in re.findall(r"\d+", p.expression)),
        ),
        (ArithmeticConfig(n_ops=2, style="word"), lambda p: "points" in p.question and p.style == "word"),
        (ArithmeticConfig(n_ops=2, style="chain"), lambda p: p.expression in p.question),
    ],
)
def test_difficulty_knobs_are_honoured(config: ArithmeticConfig, check) -> None:
    problems = generate_problems(40, config, seed=11)
    assert len(problems) == 40
    assert all(check(p) for p in problems)


def test_word_expression_makes_sequential_order_explicit() -> None:
    problems = generate_problems(200, ArithmeticConfig(n_ops=4, style="word"), seed=2)
    assert all(parse_expression(p.expression)[0] == p.answer for p in problems)
    assert any("(" in p.expression for p in problems)


def test_problem_id_depends_on_style_and_question_only() -> None:
    a, b = generate_problems(2, ArithmeticConfig(n_ops=1, operators="+", max_value=1), seed=0)
    assert a.question == b.question and a.problem_id == b.problem_id
    word = generate_problems(1, ArithmeticConfig(n_ops=1, style="word"), seed=0)[0]
    assert word.problem_id != a.problem_id


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n_ops": 0}, "n_ops=0 is out of range"),
        ({"operators": "/"}, "subset of"),
        ({"operators": ""}, "non-empty"),
        ({"min_value": 5, "max_value": 2}, "min_value <= max_value"),
        ({"min_value": -1}, "0 <= min_value"),
        ({"style": "latex"}, "style='latex' is unknown"),
    ],
)
def test_config_rejects_bad_knobs(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        ArithmeticConfig(**kwargs)


def test_negative_n_is_rejected() -> None:
    with pytest.raises(ValueError, match="n=-1"):
        generate_problems(-1, ArithmeticConfig(), seed=0)


# --- parsing -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value", "n_ops"),
    [
        ("12+7-3*2", 13, 3),
        (" 12 + 7 ", 19, 1),
        ("-4+2", -2, 1),
        ("5--3", 8, 1),
        ("(12+7-3)*2", 32, 3),
        ("2*3*4", 24, 2),
        ("10-2-3", 5, 2),
        ("7", 7, 0),
        ("3*-2", -6, 1),
        ("(" * 8 + "1" + ")" * 8, 1, 0),  # MAX_DEPTH brackets
        ("٣+1", 4, 1),  # any Unicode decimal digit, as int() reads it
    ],
)
def test_parse_expression_values(text: str, value: int, n_ops: int) -> None:
    parsed = parse_expression(text)
    assert parsed is not None and parsed[:2] == (value, n_ops)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "3-",
        "*3",
        "3-*2",
        "(3+4",
        "3+4)",
        "3.5+1",
        "three",
        "2**3",
        "1" * 40,
        "(" * 20 + "1" + ")" * 20,
        "1+" * 300 + "1",
        "__import__('os')",
        "(" * 9 + "1" + ")" * 9,
        "2(3)",
        "[1+2]",
        "2 x 3",
        "$3",
        "+3",
        "--3",
        "3/2",
        "3//2",
        "2^3",
        "50%",
        "1,234",
        "3 = 3",
        "1+²",
    ],
)
def test_parse_expression_rejects_malformed_text(text: str) -> None:
    assert parse_expression(text) is None


def test_parse_expression_tokens_are_the_text_as_written() -> None:
    assert parse_expression(" 12 + (٣-4)") == (11, 2, ("12", "+", "(", "٣", "-", "4", ")"))


# --- step truth ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("steps", "expected"),
    [
        (CHAIN.gold_steps, [True, True, True]),
        (["3-7+2*5 = 3-7+10", "3-7+10 = -5+10", "-5+10 = 5"], [True, False, False]),  # slip 3-7=-5
        (["3-7+2*5 = 3-7+11", "3-7+11 = -4+11"], [False, False]),  # wrong product
        (["3-7+2*5 = 3-7+10", "3-8+10 = -5+10"], [True, False]),  # copy error in a true equation
        (["3-7+2*5 = 3-7+10", "3-7+10 = -4+10", "-4+10 = 6", "6 = 6"], [True, True, True, False]),  # extra
        (["3-7+2*5 = 3-7+10"], [True]),  # fewer steps than gold: still on track
        (["3-7+2*5 = -4+10", "-4+10 = 6"], [True, True]),  # two reductions at once preserve the value
        (["3-7+2*5 = 6"], [True]),
        (["3-7+2*5 = 10+3-7"], [True]),  # value-preserving rewrite with progress (documented choice)
        (["3-7+2*5 = 3-7+2*5"], [False]),  # no progress
        (["3 - 7 + 2 * 5  =  3-7+10"], [True]),  # whitespace is ignored
        (["3-7+2*5 = ", "3-7+10 = -4+10"], [False, False]),  # malformed, then gold: still wrong
        (["", "garbage"], [False, False]),
        (["3-7+2*5 == 3-7+10"], [False]),
        (["3-7+2*5 = 3-7+10 = -4+10"], [False]),
        (["so 3-7+2*5 = 3-7+10"], [False]),
        ([], []),
    ],
)
def test_chain_step_truth(steps: list[str], expected: list[bool]) -> None:
    assert step_truth(CHAIN, steps) == expected
    assert first_error_index(CHAIN, steps) == (expected.index(False) if False in expected else -1)


@pytest.mark.parametrize(
    ("steps", "expected"),
    [
        (WORD.gold_steps, [True, True, True]),
        (["12+7 = 19", "19-3 = 15", "15*2 = 30"], [True, False, False]),  # slip
        (["12+7 = 20"], [False]),  # false equation
        (["12+8 = 20", "20-3 = 17"], [False, False]),  # true equation, wrong total (copy error)
        (["12+7 = 19", "19-3 = 16", "16*2 = 32", "32*1 = 32"], [True, True, True, False]),  # extra step
        (["12+7 = 19", "19-3 = 16"], [True, True]),  # stops early
        (["12 + 7 = 19", "19 - 3 = 16"], [True, True]),
        (["12+7=19", "nineteen minus 3 is 16", "16*2 = 32"], [True, False, False]),
    ],
)
def test_word_step_truth(steps: list[str], expected: list[bool]) -> None:
    assert step_truth(WORD, steps) == expected


def test_step_truth_never_raises_on_hostile_text() -> None:
    hostile = ["=" * 1000, "9" * 10_000 + " = 1", "(" * 500 + " = 1", "\x00 = \x00", "1*" * 5000 + "1 = 1"]
    assert step_truth(CHAIN, hostile) == [False] * len(hostile)
