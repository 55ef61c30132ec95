"""LLM judge: vote parsing on hostile text, majority/tie rules, rows that fit the warehouse, one real engine run."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime

import pytest

from prm.datagen.targets import SolutionToLabel
from prm.generation import Completion, GenerationRequest
from prm.labeling.judge import JudgeConfig, judge_prompt, judge_solutions, majority, parse_vote
from warehouse.schemas import TABLES
from warehouse.validate import validate_rows

PROVENANCE = {"run_id": "r1", "created_at": datetime(2026, 1, 1, tzinfo=UTC), "source": "arith", "day": "2026-01-01"}


@pytest.mark.parametrize(
    "text,n_steps,index,reason",
    [
        (r"Paragraph 2 is wrong. \boxed{2}", 4, 2, ""),
        (r"All good. \boxed{-1}", 4, -1, ""),
        (r"\boxed{ 0 }", 4, 0, ""),
        ("Earliest error: 3", 4, 3, ""),
        ("earliest error paragraph: 1", 4, 1, ""),
        (r"\boxed{1} so the earliest error: 1", 4, 1, ""),  # two forms, one index: a vote
        (r"\boxed{1} ... wait, \boxed{2}", 4, None, "conflicting"),
        (r"\boxed{4}", 4, None, "out_of_range"),
        (r"\boxed{-2}", 4, None, "out_of_range"),
        (r"\boxed{9999999999999999999999}", 4, None, "no_answer"),  # too many digits: never parsed
        (r"\boxed{two}", 4, None, "no_answer"),
        (r"\boxed{１}", 4, None, "no_answer"),  # fullwidth digit
        ("I'm ready to help. What's the task?", 4, None, "no_answer"),
        ("", 4, None, "empty"),
        (None, 4, None, "empty"),
        ("\x00" * 100_000 + r"\boxed{1}", 4, 1, ""),  # a runaway sample: only the tail is read
    ],
)
def test_parse_vote(text: str | None, n_steps: int, index: int | None, reason: str) -> None:
    vote = parse_vote(text, n_steps)
    assert (vote.index, vote.reason) == (index, reason)


@pytest.mark.parametrize(
    "votes,tie_break,first_error,agreement",
    [
        ([1, 1, 1, 2, None], "earliest", 1, 0.75),
        ([2, 2, 1], "earliest", 2, 2 / 3),  # plurality, not the earliest
        ([2, 1], "earliest", 1, 0.5),  # tie: earliest error wins
        ([-1, 3], "earliest", 3, 0.5),  # tie with "no error": the error wins (-1 ranks last)
        ([-1, 3], "none", None, 0.5),  # tie and tie_break none: no majority
        ([-1, -1, 0], "earliest", -1, 2 / 3),
        ([None, None], "earliest", None, None),  # nothing counted: no majority
        ([], "earliest", None, None),
    ],
)
def test_majority(votes: list[int | None], tie_break: str, first_error: int | None, agreement: float | None) -> None:
    result = majority(votes, tie_break)
    assert result.first_error == first_error
    assert result.agreement == pytest.approx(agreement) if agreement is not None else result.agreement is None


@pytest.mark.parametrize("kwargs,match", [({"k": 0}, "k=0"), ({"temperature": -1}, "temperature"),
                                          ({"max_tokens": 0}, "max_tokens"), ({"model": ""}, "model"),
                                          ({"tie_break": "latest"}, "tie_break"),
                                          ({"k": 3, "temperature": 0.0}, "use k=1")])
def test_config_rejects(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        JudgeConfig(**kwargs)


class ScriptedBackend:
    """Returns the scripted sample texts per request, in order; records requests."""

    def __init__(self, texts: Sequence[Sequence[str]], fail: Sequence[int] = ()) -> None:
        self.texts, self.fail, self.calls = list(texts), set(fail), []

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Completion]:
        self.calls.append(list(requests))
        rows = []
        for i, r in enumerate(requests):
            if i in self.fail:
                rows.append(Completion.failed(i, "engine died"))
                continue
            texts = tuple(self.texts[i][: r.n])
            rows.append(Completion(texts, ("stop",) * len(texts), 50, tuple(10 for _ in texts), index=i))
        return rows


class Plain:
    chat_template = None


def _solution(sid: str, n: int) -> SolutionToLabel:
    return SolutionToLabel.of_steps(sid, "p" + sid, "Evaluate 1+2+3.\n", [f"step {k}" for k in range(n)], "6")


def test_judge_rows_fit_the_warehouse() -> None:
    backend = ScriptedBackend([
        [r"\boxed{1}", r"\boxed{1}", "Earliest error: 2", "nonsense", r"\boxed{7}"],
        [r"\boxed{-1}"] * 5,
        ["?"] * 5,
    ])
    sols = [_solution("a", 3), _solution("b", 2), _solution("c", 2)]
    run = judge_solutions(sols, backend, JudgeConfig(k=5), tokenizer=Plain())
    assert len(backend.calls) == 1 and len(backend.calls[0]) == 3  # every solution in one batched call
    assert "<paragraph_2>\nstep 2\n</paragraph_2>" in backend.calls[0][0].prompt
    a, b, c = run.judgments
    assert (a.first_error, a.n_votes, a.n_abstain, json.loads(a.votes_json)) == (1, 5, 2, [1, 1, 2, None, None])
    assert a.agreement == pytest.approx(2 / 3) and a.cost_tokens == 50 + 5 * 10
    assert (b.first_error, b.agreement) == (-1, 1.0)
    assert (c.first_error, c.n_abstain, c.agreement) == (None, 5, None)
    by_sol = {sid: [lb for lb in run.labels if lb.solution_id == sid] for sid in "abc"}
    assert [(lb.hard_label, lb.status) for lb in by_sol["a"]] == [(True, "labeled"), (False, "labeled"),
                                                                  (False, "by_convention")]
    assert [lb.soft_label for lb in by_sol["a"]] == [1.0, pytest.approx(1 / 3), 0.0]
    assert all(lb.hard_label and lb.soft_label == 1.0 for lb in by_sol["b"])
    assert all(lb.hard_label is None and lb.status == "unverifiable" for lb in by_sol["c"])
    assert sum(lb.cost_tokens for lb in run.labels) == run.cost_tokens == 300
    assert validate_rows("judgments", TABLES["judgments"], run.judgment_rows(), PROVENANCE).num_rows == 3
    assert validate_rows("step_labels", TABLES["step_labels"], run.rows(), PROVENANCE).num_rows == 7


def test_judgment_ids_are_stable_and_errors_reported() -> None:
    sols = [_solution("a", 2), _solution("b", 2)]
    first = judge_solutions(sols, ScriptedBackend([[r"\boxed{0}"]] * 2, fail=[1]), JudgeConfig(k=1), tokenizer=Plain())
    again = judge_solutions(sols, ScriptedBackend([[r"\boxed{1}"]] * 2), JudgeConfig(k=1), tokenizer=Plain())
    assert first.judgments[0].judgment_id == again.judgments[0].judgment_id
    assert [j.solution_id for j in first.judgments] == ["a"] and first.errors == ("b: engine died",)
    assert judge_solutions(sols, ScriptedBackend([]), skip={"a", "b"}, tokenizer=Plain()).judgments == ()


def test_prompt_lists_steps_from_zero() -> None:
    text = judge_prompt("Evaluate 1+2.", ["1+2 = 3"])
    assert "[Math Problem]\n\nEvaluate 1+2." in text and "<paragraph_0>\n1+2 = 3\n</paragraph_0>" in text
    assert text.endswith(r"in \boxed{}.")


@pytest.mark.slow
def test_smollm2_judges_generated_arithmetic(smollm2_backend) -> None:
    from prm.tasks.arithmetic import ArithmeticConfig, generate_problems

    problems = generate_problems(4, ArithmeticConfig(n_ops=2), seed=0)
    sols = [SolutionToLabel.of_steps(f"s{i}", p.problem_id, p.question + "\n", p.gold_steps, str(p.answer))
            for i, p in enumerate(problems)]
    config = JudgeConfig(k=3, max_tokens=64)
    run = judge_solutions(sols, smollm2_backend, config, questions={p.problem_id: p.question for p in problems})
    assert sorted(j.solution_id for j in run.judgments) == [s.solution_id for s in sols]
    for j in run.judgments:
        votes = json.loads(j.votes_json)
        assert j.n_votes == len(votes) == config.k
        assert sum(v is not None for v in votes) + j.n_abstain == config.k
        assert j.cost_tokens > 0
    assert len(run.labels) == sum(len(s.steps) for s in sols)
