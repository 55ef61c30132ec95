"""Search on problems from any source with a gold answer (GSM8K-shaped here), graded by the project's answer grader;
generated arithmetic stays the default."""

from __future__ import annotations

from pathlib import Path

import pytest

from prm.search.config import SearchConfig
from prm.search.methods import run_search
from prm.search.run import summarize, warehouse_problems
from prm.training import TrainingSetConfig, stratified_splits
from tests.prm.evaluation.gsm8k_like import N_PROBLEMS, fill_gsm8k_like
from tests.prm.search.scripted import ScriptedExpander, ScriptedPRM, prompter
from warehouse import Warehouse, connect


def test_a_warehouse_source_gives_problems_with_gold_answers(wh: Warehouse) -> None:
    fill_gsm8k_like(wh)
    every = warehouse_problems(wh.root, 100, source="gsm8k")
    assert len(every) == N_PROBLEMS and {p.task for p in every} == {"gsm8k"}
    assert all(p.gold_answer.strip() for p in every)
    assert [p.problem_id for p in warehouse_problems(wh.root, 3, source="gsm8k")] == [p.problem_id for p in every[:3]]
    data = TrainingSetConfig(method="mc", val_share=0.25, test_share=0.35)
    splits = stratified_splits(connect(wh.root), data)
    held = warehouse_problems(wh.root, 100, source="gsm8k", split_of=splits)
    assert 0 < len(held) < N_PROBLEMS and all(splits(p.problem_id, p.n_gold_steps) == "test" for p in held)


def test_a_source_without_problems_is_a_clear_error(wh: Warehouse) -> None:
    fill_gsm8k_like(wh)
    with pytest.raises(ValueError, match=r"0 problems with a gold answer from source 'math'.*materialize problems"):
        warehouse_problems(wh.root, 4, source="math")
    with pytest.raises(ValueError, match="at least one"):
        warehouse_problems(wh.root, 0)


@pytest.mark.parametrize("method", ["best_of_n", "majority_vote"])
def test_picks_on_word_problems_are_graded_against_the_gold_answer(wh: Warehouse, method: str) -> None:
    """Real-LLM-style text ("The answer is 1,234." / "... is $12$"): the grader reads it, not an integer compare."""
    fill_gsm8k_like(wh)
    problems = warehouse_problems(wh.root, 2, source="gsm8k")
    texts = {p.question: [f"He adds 10.\nThe answer is {int(p.gold_answer):,}.", "He guesses.\nThe answer is $1$"]
             for p in problems}

    def full(question: str, j: int) -> str:
        return texts[question][j % 2]

    prm = ScriptedPRM({"He adds 10.": 0.9, "He guesses.": 0.1})
    config = SearchConfig(n=3, m=3)
    results = run_search(method, [p.question for p in problems], prompter, ScriptedExpander(lambda *_: "", full), prm,
                         config)
    summary = summarize(method, config, results, [p.gold_answer for p in problems])
    assert summary.accuracy == 1.0 and summary.accuracy_ci == (1.0, 1.0)
    wrong = summarize(method, config, results, ["7", "7"])
    assert wrong.accuracy == 0.0


def test_the_cli_takes_a_source(wh: Warehouse, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from prm.search.__main__ import main

    fill_gsm8k_like(wh)
    assert main(["run", "--prm", str(tmp_path / "absent"), "--method", "dvts", "--source", "math",
                 "--warehouse", str(wh.root)]) == 1
    assert "source 'math'" in capsys.readouterr().err
