"""``sympy_ref``: SymPy's exact arithmetic check plus the reference solution's values, a derived formal labeler.

Per solution (rules in :mod:`verifiers.reference`, chosen on ProcessBench's validation rows): a final answer that
matches the gold answer makes every step right unless an equation is false; a wrong one puts the first error at the
first false equation or the first step that writes a number neither the question, the reference solution nor the
gold answer holds, whichever comes first; without a gradable answer (no gold answer) only the arithmetic decides,
as the ``sympy`` labeler does. It uses the reference (the ``problems`` row's ``gold_answer`` and ``gold_solution``),
so audits report it apart from methods that see only problem and steps.

Where the values come from: ``problems.gold_solution`` as stored. The GSM8K loader (:mod:`prm.tasks.datasets`)
keeps the calculator annotations (``<<48/2=24>>``); they are read when present, and the values are read from the
solution's own numbers and equations either way, so a solution stripped of them loses nothing. Nothing is kept in
``meta_json``.

The final answer: ``solutions.is_correct`` where the solutions asset graded it; where it could not (no answer
statement), the last number of the last step is graded against the gold answer, in the verifier pool.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from prm.format import (
    STATUS_BY_CONVENTION,
    STATUS_LABELED,
    STATUS_UNVERIFIABLE,
    labels_from_first_error,
    statuses_from_first_error,
)
from prm.labeling.constants import FORMAL_TIMEOUT_S
from prm.labeling.formal import VERIFIER_OF_TASK
from prm.labeling.types import LabelRun, PartitionRows, StepLabel, derived_run, params_json
from verifiers import (
    ReferenceVerdict,
    StepVerdict,
    build_reference,
    check_steps,
    extract_answer,
    grade_answers,
    locate_first_error,
)

REFERENCE_METHOD = "sympy_ref"
REFERENCE_TASKS = ("gsm8k", "math")  # dataset tasks: a gold answer, often a reference solution (generated tasks: truth)


@dataclass(frozen=True)
class ReferenceConfig:
    """Settings of the ``sympy_ref`` labeler (written to every row's ``params_json``)."""

    timeout_s: float = FORMAL_TIMEOUT_S  # per step, the arithmetic check in the verifier pool
    use_reference: bool = True  # False: know only the question's numbers and the gold answer (no gold solution)


@dataclass(frozen=True)
class _Solution:
    solution_id: str
    problem_id: str
    step_idx: tuple[int, ...]
    texts: tuple[str, ...]


def _solutions(steps: Sequence[Mapping[str, Any]], tasks: Mapping[str, str]) -> list[_Solution]:
    """The steps of each solution whose task SymPy checks, in step order."""
    grouped: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for s in steps:
        if VERIFIER_OF_TASK.get(tasks.get(s["problem_id"], "")) == "sympy":
            grouped[s["solution_id"]].append(s)
    out = []
    for sid, rows in grouped.items():
        rows.sort(key=lambda r: int(r["step_idx"]))
        out.append(_Solution(sid, rows[0]["problem_id"], tuple(int(r["step_idx"]) for r in rows),
                             tuple(r["text"] for r in rows)))
    return out


def _answers(todo: Sequence[_Solution], solutions: Mapping[str, Mapping[str, Any]],
             problems: Mapping[str, Mapping[str, Any]]) -> dict[str, tuple[str | None, bool | None]]:
    """(final answer, graded right?) per solution: the stored grade, else the answer statement or the last number of
    the last step graded against the gold answer (one pool batch); (answer, None) without a gold answer."""
    out: dict[str, tuple[str | None, bool | None]] = {}
    pending: list[tuple[str, str | None, str]] = []
    for sol in todo:
        row = solutions.get(sol.solution_id, {})
        gold = problems.get(sol.problem_id, {}).get("gold_answer")
        answer = row.get("final_answer")
        if row.get("is_correct") is not None and answer is not None:
            out[sol.solution_id] = (answer, bool(row["is_correct"]))
            continue
        if answer is None:
            answer = extract_answer("\n\n".join(sol.texts)) or extract_answer(sol.texts[-1], last_number=True)
        if not isinstance(gold, str) or not gold.strip() or answer is None:
            out[sol.solution_id] = (answer, None)
        else:
            pending.append((sol.solution_id, answer, gold))
    grades = grade_answers([(answer, gold) for _, answer, gold in pending]) if pending else []
    for (sid, answer, _), grade in zip(pending, grades, strict=True):
        out[sid] = (answer, grade)
    return out


def _step_labels(verdict: ReferenceVerdict, n: int) -> tuple[list[bool | None], list[str]]:
    """Hard labels and statuses: from the first error when located, else per step with the PRM convention after
    the first wrong one (as the ``sympy`` labeler does)."""
    if verdict.first_error is not None:
        return labels_from_first_error(n, verdict.first_error), statuses_from_first_error(n, verdict.first_error)
    hard = [{"correct": True, "incorrect": False}.get(v.status) for v in verdict.steps]
    status = [STATUS_UNVERIFIABLE if ok is None else STATUS_LABELED for ok in hard]
    first_wrong = next((k for k, ok in enumerate(hard) if ok is False), n)
    for k in range(first_wrong + 1, n):
        hard[k], status[k] = False, STATUS_BY_CONVENTION
    return hard, status


class ReferenceLabeler:
    """``sympy_ref`` behind the one interface, derived variant: reads the partition's ``steps``, ``solutions`` and
    ``problems``; labels the steps of the tasks SymPy checks. Per-solution rules and first errors are in
    ``extra["verdicts"]``, the count of each rule in ``extra["counts"]``.

    >>> problems = [{"problem_id": "p", "task": "gsm8k", "question": "Errol paid $2,400; the computer cost $1,100.",
    ...              "gold_answer": "1300", "gold_solution": "2400-1100=<<2400-1100=1300>>1300"}]
    >>> steps = [{"solution_id": "s", "problem_id": "p", "step_idx": k, "text": t}
    ...          for k, t in enumerate(["The computer cost $1,100.", "So 2400 - 1200 = 1200 is left."])]
    >>> run = ReferenceLabeler().label({"steps": steps, "solutions": [], "problems": problems})
    >>> [r["hard_label"] for r in run.rows()], run.rows()[0]["first_error"], run.extra["counts"]
    ([True, False], 1, {'unknown_value': 1})
    """

    reads = ("steps", "solutions", "problems")

    def __init__(self, config: ReferenceConfig | None = None, name: str = REFERENCE_METHOD) -> None:
        self.config = config or ReferenceConfig()
        self.name = name

    def label(self, rows: PartitionRows) -> LabelRun:
        """Check every step's arithmetic (one pool batch), grade the answers that need it, locate first errors."""
        problems = {p["problem_id"]: p for p in rows["problems"]}
        solutions = {s["solution_id"]: s for s in rows["solutions"]}
        todo = _solutions(rows["steps"], {pid: p.get("task", "") for pid, p in problems.items()})
        texts = [t for sol in todo for t in sol.texts]
        arithmetic = iter(check_steps(texts, timeout_s=self.config.timeout_s, kind="arithmetic") if texts else [])
        answers = _answers(todo, solutions, problems)
        params = params_json(self.name, self.config)
        labels: list[StepLabel] = []
        verdicts: list[dict[str, Any]] = []
        counts: Counter[str] = Counter()
        for sol in todo:
            checked: list[StepVerdict] = [next(arithmetic) for _ in sol.texts]
            problem = problems.get(sol.problem_id, {})
            reference = build_reference(problem.get("question"), problem.get("gold_answer"),
                                        problem.get("gold_solution") if self.config.use_reference else None)
            answer, right = answers[sol.solution_id]
            verdict = locate_first_error(sol.texts, checked, reference, answer, right)
            counts[verdict.rule] += 1
            hard, status = _step_labels(verdict, len(sol.texts))
            first = next((k for k, v in enumerate(verdict.steps) if v.status == "incorrect"), None)
            verdicts.append({"solution_id": sol.solution_id, "rule": verdict.rule, "first_error": verdict.first_error,
                             "answer": answer, "answer_correct": right, "reference": reference.source,
                             "detail": None if first is None else verdict.steps[first].detail[:500]})
            labels += [StepLabel(solution_id=sol.solution_id, problem_id=sol.problem_id, step_idx=idx,
                                 method=self.name, soft_label=None if ok is None else float(ok), hard_label=ok,
                                 status=st, n_rollouts=0, n_correct=0, first_error=verdict.first_error,
                                 params_json=params)
                       for idx, ok, st in zip(sol.step_idx, hard, status, strict=True)]
        return derived_run(self.name, labels, verdicts=verdicts, counts=dict(counts))
