"""Synthetic solutions for tasks no policy is trained on (logic): the gold steps and corrupted copies.

FoVer labels LLM-written logic solutions with Z3; here no embedded model writes logic, so the
solutions are the gold derivation plus copies with one step made wrong (flipped conclusion, dropped
premise, unrelated atom, or assumed conclusion), each with its exact first wrong step.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from prm.datagen.solutions import SampleStats, solution_id
from prm.datagen.truth import logic_problem, step_truths
from prm.format import join_steps, segment
from prm.tasks import corrupt_steps

SYNTHETIC_PREFIX = "synthetic:"  # solutions.model of every program-written row starts with it
SYNTHETIC_MODEL = SYNTHETIC_PREFIX + "gold+corruption"  # solutions.model of these rows; rollout labelers skip them


def is_synthetic(model: str) -> bool:
    """Whether a ``solutions.model`` names program-written rows rather than a policy's samples.

    >>> is_synthetic(SYNTHETIC_MODEL), is_synthetic("arith-policy@c48338b7531d")
    (True, False)
    """
    return model.startswith(SYNTHETIC_PREFIX)


def policy_written_sql(column: str) -> str:
    """The SQL condition that keeps rows whose ``column`` (a ``solutions.model``) is not synthetic.

    >>> policy_written_sql("so.model")
    "NOT starts_with(so.model, 'synthetic:')"
    """
    return f"NOT starts_with({column}, '{SYNTHETIC_PREFIX}')"


def synthetic_solution_rows(
    problems: Sequence[Mapping[str, Any]], *, n: int, seed: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], SampleStats]:
    """``n`` solutions per logic problem (sample 0 is gold, the rest corrupted), as ``solutions``/``steps`` rows."""
    solutions: list[dict[str, Any]] = []
    steps: list[dict[str, Any]] = []
    for row in problems:
        problem = logic_problem(row)
        if problem is None:
            raise ValueError(f"problem {row['problem_id']} has task {row.get('task')!r}; only logic is synthesized")
        for k in range(n):
            texts = list(problem.gold_steps)
            if k > 0:
                texts = corrupt_steps(problem, _seed(problem.problem_id, seed, k))[0]
            answer = _concluded(texts, problem.target) or problem.answer
            seg = segment(join_steps(texts) + f"Answer: {answer}")  # program-written: the canonical layout
            truth, first_error = step_truths(row, seg.steps)
            sid = solution_id(problem.problem_id, SYNTHETIC_MODEL, seed, k)
            solutions.append({"solution_id": sid, "problem_id": problem.problem_id, "sample_idx": k,
                              "text": seg.text, "n_steps": len(seg),
                              "final_answer": answer, "is_correct": answer == problem.answer,
                              "first_error_truth": first_error, "finish_reason": "stop", "status": "ok",
                              "model": SYNTHETIC_MODEL, "seed": seed, "prompt_tokens": 0, "completion_tokens": 0})
            steps += [{"solution_id": sid, "problem_id": problem.problem_id, "step_idx": i, "text": t,
                       "char_start": start, "char_end": end, "is_correct_truth": ok}
                      for i, (t, (start, end), ok) in enumerate(zip(seg.steps, seg.spans, truth, strict=True))]
    stats = SampleStats(n_problems=len(problems), n_solutions=len(solutions), n_errors=0,
                        n_correct=sum(s["is_correct"] for s in solutions), prompt_tokens=0, completion_tokens=0)
    return solutions, steps, stats


def _seed(problem_id: str, seed: int, k: int) -> int:
    """A corruption seed per (problem, seed, sample): problems do not all get the same corruption."""
    return int(hashlib.sha1(f"{problem_id}/{seed}/{k}".encode()).hexdigest()[:12], 16)


def _concluded(steps: Sequence[str], target: str) -> str | None:
    """'True'/'False' for the last step concluding ``target``, or None when none does."""
    for step in reversed(steps):
        conclusion = step.rpartition(" -> ")[2].strip()
        atom, _, value = conclusion.partition(" is ")
        if atom.strip() == target and value.strip() in {"true", "false"}:
            return value.strip().capitalize()
    return None
