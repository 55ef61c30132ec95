"""The judge's and consensus's results ride on the label run as typed, frozen dataclasses (``LabelRun.result``),
checked on read; the rows they write are those of the functions the labelers wrap."""

from __future__ import annotations

import dataclasses

import pytest

from prm.labeling import get_labeler
from prm.labeling.consensus import ConsensusResult
from prm.labeling.judge import JudgeConfig, JudgeRun, judge_solutions
from tests.prm.labeling.test_judge import Plain, ScriptedBackend, _solution


def test_the_judge_labeler_carries_its_judge_run_as_a_typed_result() -> None:
    texts = [[r"\boxed{1}"], [r"\boxed{-1}"]]
    sols = [_solution("a", 3), _solution("b", 2)]
    run = get_labeler("judge", JudgeConfig(k=1, temperature=0.0)).label(sols, ScriptedBackend(texts),
                                                                        tokenizer=Plain())
    result = run.result_as(JudgeRun)
    expected = judge_solutions(sols, ScriptedBackend(texts), JudgeConfig(k=1, temperature=0.0), tokenizer=Plain())
    assert result == expected and run.extra == {}
    assert [j.first_error for j in result.judgments] == [1, -1] and run.rows() == expected.rows()
    assert run.solution_ids == ("a", "b") and run.cost_tokens == expected.cost_tokens
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.n_abstain = 3  # type: ignore[misc]
    with pytest.raises(TypeError, match="'judge' label run holds a JudgeRun result, not a ConsensusResult"):
        run.result_as(ConsensusResult)


def test_a_method_without_a_typed_result_says_so() -> None:
    run = get_labeler("progress").label({"step_labels": [], "solutions": []})
    assert run.result is None
    with pytest.raises(TypeError, match="holds a NoneType result, not a JudgeRun"):
        run.result_as(JudgeRun)
