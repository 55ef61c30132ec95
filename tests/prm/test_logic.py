"""Generated logic problems: determinism, gold steps all true, corrupted steps caught."""

from __future__ import annotations

import pytest

from prm.tasks.logic import LogicConfig, corrupt_steps, generate_logic_problem, step_truth
from verifiers import check_logic_step


def test_same_seed_same_problem() -> None:
    assert generate_logic_problem(5) == generate_logic_problem(5)
    assert generate_logic_problem(5).problem_id != generate_logic_problem(6).problem_id


@pytest.mark.parametrize("seed", range(40))
def test_gold_steps_are_true_and_reach_the_answer(seed: int) -> None:
    problem = generate_logic_problem(seed)
    assert step_truth(problem, list(problem.gold_steps)) == [True] * len(problem.gold_steps)
    last = problem.gold_steps[-1].split(" -> ")[1]
    assert last == f"{problem.target} is {problem.answer.lower()}"
    assert f"is {problem.target} true?" in problem.question


@pytest.mark.parametrize("seed", range(40))
def test_corruption_is_caught_at_its_step(seed: int) -> None:
    problem = generate_logic_problem(seed, LogicConfig(n_atoms=10, chain_length=4))
    steps, bad = corrupt_steps(problem, seed)
    truth = step_truth(problem, steps)
    assert truth[:bad] == [True] * bad
    assert truth[bad] is False


def test_unproven_premise_is_false_even_when_valid() -> None:
    problem = generate_logic_problem(0)
    target = problem.target
    step = f"{target} is true -> {target} is true"  # valid implication, premise never given
    assert check_logic_step(step).status == "correct"
    assert step_truth(problem, [step]) == [False]


def test_config_rejects_too_few_atoms() -> None:
    with pytest.raises(ValueError, match="raise n_atoms"):
        LogicConfig(n_atoms=3)
