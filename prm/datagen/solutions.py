"""Sampled solutions as ``solutions`` and ``steps`` rows, graded against gold and exact truth."""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from prm.datagen.truth import step_truths
from prm.format import Prompter, segment
from prm.generation import Completion, GenerationBackend, sample_solutions
from prm.tasks import stable_id
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

    @classmethod
    def from_rows(cls, solutions: Sequence[Mapping[str, Any]]) -> SampleStats:
        """The stats of stored ``solutions`` rows (one prompt per problem: its sample 0 carries the prompt tokens).

        >>> SampleStats.from_rows([{"problem_id": "p", "status": "ok", "is_correct": True, "sample_idx": 0,
        ...                         "prompt_tokens": 5, "completion_tokens": 9}]).accuracy
        1.0
        """
        return cls(n_problems=len({s["problem_id"] for s in solutions}), n_solutions=len(solutions),
                   n_errors=sum(s["status"] == "error" for s in solutions),
                   n_correct=sum(bool(s.get("is_correct")) for s in solutions),
                   prompt_tokens=sum(s["prompt_tokens"] or 0 for s in solutions if s["sample_idx"] == 0),
                   completion_tokens=sum(s["completion_tokens"] or 0 for s in solutions))


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


def accuracy_by_gold_steps(problems: Sequence[Mapping[str, Any]],
                           solutions: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per gold-step count: ok solutions, their accuracy, and the share of problems with both outcomes."""
    steps_of = {p["problem_id"]: p.get("n_gold_steps") for p in problems}
    outcomes: dict[object, list[bool]] = defaultdict(list)
    per_problem: dict[str, set[bool]] = defaultdict(set)
    for s in solutions:
        if s["status"] == "ok":
            outcomes[steps_of[s["problem_id"]]].append(bool(s.get("is_correct")))
            per_problem[s["problem_id"]].add(bool(s.get("is_correct")))
    rows = []
    for n_steps in sorted(outcomes, key=lambda v: (v is None, v)):
        pids = [p for p, k in steps_of.items() if k == n_steps and p in per_problem]
        rows.append({"gold steps": n_steps, "solutions": len(outcomes[n_steps]),
                     "accuracy": f"{sum(outcomes[n_steps]) / len(outcomes[n_steps]):.0%}",
                     "problems with both outcomes": f"{sum(len(per_problem[p]) == 2 for p in pids) / len(pids):.0%}"})
    return rows


def sampling_key(problems: Sequence[Mapping[str, Any]], **settings: Any) -> str:
    """Digest of the problems and every setting a partition's solutions depend on (model, prompt version,
    sampling numbers); equal keys mean sampling again would redo the same work."""
    what = {**settings, "problems": sorted((p["problem_id"], p["question"], p["gold_answer"]) for p in problems)}
    return hashlib.sha256(json.dumps(what, sort_keys=True, default=str).encode()).hexdigest()[:16]


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
    top_p: float = 1.0,
    stop: Sequence[str] = (),
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], SampleStats]:
    """Sample ``n`` solutions per problem in one batched engine call and build their rows (``prompter`` carries
    the prompt template; ``top_p`` and ``stop`` go to the backend as they are)."""
    completions = sample_solutions(backend, [prompter(p["question"]) for p in problems], n,
                                   max_tokens=max_tokens, temperature=temperature, top_p=top_p, stop=stop, seed=seed)
    return solution_rows(problems, completions, model=model, n=n, temperature=temperature, seed=seed,
                         prompt_version=prompter.version)
