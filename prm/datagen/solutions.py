"""Sampled solutions as ``solutions`` and ``steps`` rows, graded against gold and exact truth."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from prm.datagen.truth import step_truths
from prm.format import Prompter, segment
from prm.generation import Completion, GenerationBackend, sample_solutions
from prm.tasks.records import stable_id
from verifiers import extract_answer, grade_answers


@dataclass(frozen=True)
class SampleStats:
    """What a sampling call produced and cost."""

    n_problems: int
    n_solutions: int
    n_errors: int
    n_correct: int
    prompt_tokens: int
    completion_tokens: int

    @property
    def accuracy(self) -> float:
        graded = self.n_solutions - self.n_errors
        return self.n_correct / graded if graded else 0.0


def solution_id(problem_id: str, model: str, seed: int | None, sample_idx: int) -> str:
    """Stable id of sample ``sample_idx`` of ``problem_id`` under (model, seed)."""
    return stable_id("sol", problem_id, model, str(seed), str(sample_idx))


def solution_rows(
    problems: Sequence[Mapping[str, Any]],
    completions: Sequence[Completion],
    *,
    model: str,
    n: int,
    temperature: float,
    seed: int | None,
    prompt_version: str,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], SampleStats]:
    """Rows of ``solutions`` and ``steps`` for ``completions[i]`` sampled on ``problems[i]``.

    A failed request becomes ``n`` solution rows with status ``error`` (never dropped); texts are
    segmented by :func:`prm.format.segment` (steps carry their character spans into the text), the final
    answer extracted and graded, and generated problems get exact per-step truth and the first wrong step.
    """
    solutions: list[dict[str, Any]] = []
    steps: list[dict[str, Any]] = []
    pending_grades: list[tuple[str | None, str]] = []
    for problem, completion in zip(problems, completions, strict=True):
        pid = problem["problem_id"]
        base = {"problem_id": pid, "model": model, "temperature": temperature, "seed": seed,
                "prompt_version": prompt_version}
        if not completion.ok:
            for k in range(n):
                solutions.append({**base, "solution_id": solution_id(pid, model, seed, k), "sample_idx": k,
                                  "text": "", "n_steps": 0, "status": "error", "error": completion.error,
                                  "finish_reason": completion.finish_reasons[0] if completion.finish_reasons else None,
                                  "prompt_tokens": completion.prompt_tokens, "completion_tokens": 0})
            continue
        for k, text in enumerate(completion.texts):
            sid = solution_id(pid, model, seed, k)
            seg = segment(text)
            parts = seg.steps
            truth, first_error = step_truths(problem, parts)
            answer = extract_answer(text)
            pending_grades.append((answer, problem["gold_answer"]))
            solutions.append({**base, "solution_id": sid, "sample_idx": k, "text": text, "n_steps": len(parts),
                              "final_answer": answer, "first_error_truth": first_error,
                              "finish_reason": completion.finish_reasons[k], "status": "ok",
                              "prompt_tokens": completion.prompt_tokens,
                              "completion_tokens": completion.completion_tokens[k]})
            steps += [{"solution_id": sid, "problem_id": pid, "step_idx": i, "text": part, "char_start": start,
                       "char_end": end, "is_correct_truth": ok}
                      for i, (part, (start, end), ok) in enumerate(zip(parts, seg.spans, truth, strict=True))]
    grades = iter(grade_answers(pending_grades))
    for row in solutions:
        if row["status"] == "ok":
            row["is_correct"] = next(grades)
    stats = SampleStats(
        n_problems=len(problems),
        n_solutions=len(solutions),
        n_errors=sum(r["status"] == "error" for r in solutions),
        n_correct=sum(bool(r.get("is_correct")) for r in solutions),
        prompt_tokens=sum(c.prompt_tokens for c in completions),
        completion_tokens=sum(r["completion_tokens"] or 0 for r in solutions),
    )
    return solutions, steps, stats


def sample_solution_rows(
    backend: GenerationBackend,
    problems: Sequence[Mapping[str, Any]],
    prompter: Prompter,
    *,
    model: str,
    n: int,
    seed: int | None,
    max_tokens: int = 256,
    temperature: float = 1.0,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], SampleStats]:
    """Sample ``n`` solutions per problem in one batched engine call and build their rows."""
    completions = sample_solutions(backend, [prompter(p["question"]) for p in problems], n,
                                   max_tokens=max_tokens, temperature=temperature, seed=seed)
    return solution_rows(problems, completions, model=model, n=n, temperature=temperature, seed=seed,
                         prompt_version=prompter.version)
