"""Solutions a user already has (a rollout dump, another model's outputs, a benchmark) as warehouse rows.

:func:`intake_rows` turns the records of :func:`prm.tasks.load_solutions` into ``problems``, ``solutions`` and
``steps`` rows of one source, the same rows sampling writes, so every labeler runs on them unchanged:

* the solution text is the file's steps joined by a blank line, and each step's span cuts exactly the file's step
  (never re-segmented: a step may hold line breaks);
* ``model`` is the generator the file names (``file:<stem>`` when it names none), so rollouts of the recipe's
  policy never pass for the generator's own;
* a human first error (ProcessBench's ``label``, the first ``False`` of TRL or Math-Shepherd rows) becomes
  ``first_error_truth``, and ``steps.is_correct_truth`` is True before it, False at it and unknown after it (people
  label the first error only): the audit then scores every method against people as it does against exact truth;
* the final answer is extracted and graded against the gold answer when the problem has one (the file's, or a
  reference file's), else the file's ``final_answer_correct`` stands, else it is unknown.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from prm.tasks import LoadedSolutions, ProblemRecord, SolutionRecord, attach_reference, load_solutions
from verifiers import extract_answer, grade_answers

STEP_JOIN = "\n\n"  # between two steps of an imported solution: a paragraph break, as MATH-style text has
FILE_MODEL_PREFIX = "file:"  # the ``model`` of solutions whose file names no generator
IMPORTED_TASKS = ("math", "gsm8k")  # what an imported problem's ``task`` may be; both get the SymPy check
# In ``problems.meta_json`` of every imported problem: its solutions' first errors are people's, not exact truth.
IMPORTED_MARK = '"from": "solution file"'


@dataclass(frozen=True)
class IntakeCounts:
    """What an intake wrote and what it could not use, for the asset's metadata and the readiness check."""

    n_solutions: int
    n_steps: int
    n_problems: int
    n_human_labeled: int  # solutions with a human first error
    n_with_gold: int  # solutions whose problem has a gold answer
    n_no_answer: int  # solutions whose last step states no extractable answer
    n_set_aside: int  # rows the reader kept out (empty step, repeated id), each with its reason

    def metadata(self) -> dict[str, int]:
        return {k: int(v) for k, v in self.__dict__.items()}


_IMPORTED = {"from": "solution file"}  # json.dumps of it holds IMPORTED_MARK


def step_truth_from_first_error(n_steps: int, first_error: int | None) -> list[bool | None]:
    """Per-step truth a human first error gives: right before it, wrong at it, unknown after it.

    >>> step_truth_from_first_error(4, 1), step_truth_from_first_error(2, -1), step_truth_from_first_error(2, None)
    ([True, False, None, None], [True, True], [None, None])
    """
    if first_error is None:
        return [None] * n_steps
    if first_error < 0:
        return [True] * n_steps
    return [k < first_error if k <= first_error else None for k in range(n_steps)]


@dataclass(frozen=True)
class Intake:
    """A solution file read for one source: its solutions, their problems, and how many found a reference."""

    loaded: LoadedSolutions
    problems: tuple[ProblemRecord, ...]
    n_reference_matched: int  # solutions whose question the reference file holds (0 without one)
    n_gold_from_outcomes: int = 0  # problems whose gold answer is the final answer of a solution marked right


def read_intake(path: str | Path, *, source: str, reference: str | Path | None = None, task: str | None = None,
                limit: int | None = None) -> Intake:
    """Read the solution file at ``path`` (any format :func:`prm.tasks.load_solutions` reads) for ``source``,
    join the gold answers of ``reference`` (a GSM8K/MATH-style problem file) to its questions, take the others from
    solutions the file marks right (:func:`gold_from_outcomes`), and build its problems (``task`` default ``math``).
    A malformed file raises ValueError naming the line."""
    task = task or IMPORTED_TASKS[0]
    if task not in IMPORTED_TASKS:
        raise ValueError(f"task {task!r} is unknown for imported problems; use one of {IMPORTED_TASKS}")
    loaded = load_solutions(path, source=source, task=task, limit=limit)
    matched = 0
    if reference is not None:
        loaded, matched = attach_reference(loaded, reference)
    loaded, from_outcomes = gold_from_outcomes(loaded)
    problems: dict[str, ProblemRecord] = {}
    for record in loaded.records:
        problems.setdefault(record.problem_id, _problem(record, task))
    return Intake(loaded, tuple(problems.values()), matched, from_outcomes)


def gold_from_outcomes(loaded: LoadedSolutions) -> tuple[LoadedSolutions, int]:
    """``loaded`` where a problem without a gold answer takes the final answer of one of its solutions the file
    marks right (``final_answer_correct``: ProcessBench, a rollout dump's reward), and how many problems did.

    >>> from prm.tasks import SolutionRecord
    >>> r = SolutionRecord("s", "p", "q", ("2+2 = 4", "The answer is 4."), None, -1, None, True, None, None, 1)
    >>> fixed, n = gold_from_outcomes(LoadedSolutions("f.json", "processbench", (r,)))
    >>> fixed.records[0].gold_answer, n
    ('4', 1)
    """
    known = {r.problem_id for r in loaded.records if r.gold_answer}
    gold: dict[str, str] = {}
    for r in loaded.records:
        if r.problem_id not in known and r.problem_id not in gold and r.final_answer_correct:
            answer = final_answer(r.steps)
            if answer:
                gold[r.problem_id] = answer
    if not gold:
        return loaded, 0
    return replace(loaded, records=tuple(replace(r, gold_answer=gold[r.problem_id]) if r.problem_id in gold else r
                                         for r in loaded.records)), len(gold)


def with_gold(loaded: LoadedSolutions, gold: dict[str, str]) -> LoadedSolutions:
    """``loaded`` with each record's gold answer taken from ``gold`` (problem_id -> answer; "" = none), as the
    partition's ``problems`` rows hold them."""
    records = tuple(replace(r, gold_answer=gold.get(r.problem_id) or None) for r in loaded.records)
    return replace(loaded, records=records)


def final_answer(steps: tuple[str, ...]) -> str | None:
    """The answer an imported solution states: in its last step, else anywhere in it.

    >>> final_answer(("2+2 = 4", "The answer is 4."))
    '4'
    """
    return extract_answer(steps[-1]) or extract_answer(STEP_JOIN.join(steps))


def _problem(record: SolutionRecord, task: str) -> ProblemRecord:
    return ProblemRecord(problem_id=record.problem_id, task=task, split="solutions", question=record.question,
                         gold_answer=record.gold_answer or "", gold_solution=record.gold_solution,
                         meta=dict(_IMPORTED))


def intake_rows(loaded: LoadedSolutions) -> tuple[list[dict[str, Any]], list[dict[str, Any]], IntakeCounts]:
    """(solutions rows, steps rows, counts) of the solutions in ``loaded``. A record without a gold answer keeps
    the file's own ``final_answer_correct`` as ``is_correct``."""
    solutions: list[dict[str, Any]] = []
    steps: list[dict[str, Any]] = []
    per_problem: dict[str, int] = {}
    pending: list[tuple[int, str | None, str]] = []
    stem = Path(loaded.path).stem
    for record in loaded.records:
        sample_idx = per_problem.get(record.problem_id, 0)
        per_problem[record.problem_id] = sample_idx + 1
        text = STEP_JOIN.join(record.steps)
        answer = final_answer(record.steps)
        if record.gold_answer:
            pending.append((len(solutions), answer, record.gold_answer))
        solutions.append({"solution_id": record.solution_id, "problem_id": record.problem_id,
                          "sample_idx": sample_idx, "text": text, "n_steps": len(record.steps),
                          "final_answer": answer, "is_correct": record.final_answer_correct,
                          "first_error_truth": record.first_error, "finish_reason": None, "status": "ok",
                          "error": None, "model": record.generator or f"{FILE_MODEL_PREFIX}{stem}",
                          "prompt_version": None, "temperature": None, "seed": None, "prompt_tokens": None,
                          "completion_tokens": None})
        start = 0
        truth = step_truth_from_first_error(len(record.steps), record.first_error)
        for k, (step, ok) in enumerate(zip(record.steps, truth, strict=True)):
            steps.append({"solution_id": record.solution_id, "problem_id": record.problem_id, "step_idx": k,
                          "text": step, "char_start": start, "char_end": start + len(step), "is_correct_truth": ok})
            start += len(step) + len(STEP_JOIN)
    for (row, _, _), grade in zip(pending, grade_answers([(a, g) for _, a, g in pending]), strict=True):
        if grade is not None:
            solutions[row]["is_correct"] = grade
    counts = IntakeCounts(n_solutions=len(solutions), n_steps=len(steps), n_problems=len(per_problem),
                          n_human_labeled=sum(s["first_error_truth"] is not None for s in solutions),
                          n_with_gold=sum(bool(r.gold_answer) for r in loaded.records),
                          n_no_answer=sum(s["final_answer"] is None for s in solutions),
                          n_set_aside=len(loaded.set_aside))
    return solutions, steps, counts

