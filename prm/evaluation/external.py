"""A PRM on an external step-labelled test set: a ProcessBench-format JSONL file (``prm.export`` writes them; the
layout of ``Qwen/ProcessBench``), for data that has no step truth of its own (GSM8K, MATH).

Every row is one solution whose ``label`` is its first wrong step (-1: all right). Rows of the same ``problem``
text are one problem, so the interval resamples problems, not rows. The file has no validation split: the
threshold is the one the warehouse evaluation chose on its validation split when the caller passes it, else
:data:`prm.first_error.scores.UNCHOSEN_THRESHOLD` (P(good) = 0.5, where the two-class head's decision flips); each
row's detail says which. Best-of-N needs several graded solutions per problem, which a ProcessBench file does not
promise, so only the step metrics are reported.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from prm.export import read_processbench
from prm.first_error import UNCHOSEN_THRESHOLD, ScoredSolution, as_solutions, evaluate_processbench, f1_ci, step_auc
from prm.models import model_version
from prm.reports import metric_row
from prm.scoring import load_prm
from prm.tasks import stable_id

EXTERNAL_PREFIX = "processbench:"  # the ``split`` of an external set's rows: ``processbench:<file stem>``


def external_split(path: str | Path) -> str:
    """The ``split`` name of an external file's rows.

    >>> external_split("/data/processbench/gsm8k.jsonl")
    'processbench:gsm8k'
    """
    return EXTERNAL_PREFIX + Path(path).stem


def processbench_solutions(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """ProcessBench rows (:func:`prm.export.processbench.read_processbench`) as held-out solutions: ``solution_id``
    (the row id), ``problem_id`` (from the problem text), ``question``, ``steps``, ``first_error`` (the label),
    ``is_correct`` (``final_answer_correct`` when the row has it).

    >>> processbench_solutions([{"id": 3, "problem": "q", "steps": ["a"], "label": -1}])[0]["first_error"]
    -1
    """
    return [{"solution_id": str(r["id"]), "problem_id": stable_id("pb", r["problem"]), "question": r["problem"],
             "steps": list(r["steps"]), "first_error": int(r["label"]),
             "is_correct": r.get("final_answer_correct") if isinstance(r.get("final_answer_correct"), bool) else None}
            for r in rows]


def external_rows(model: str, label_method: str | None, test: Sequence[ScoredSolution | Mapping[str, Any]], split: str,
                  *, threshold: float | None = None, chosen_on: str | None = None,
                  experiment: str = "prm_evaluation") -> list[dict[str, Any]]:
    """``prm_evaluations`` rows of a scorer on external solutions with step truth: ProcessBench F1 (with its 95%
    interval over problems), first-error and correct accuracy at ``threshold`` (default
    :data:`~prm.first_error.scores.UNCHOSEN_THRESHOLD`), and step ROC-AUC.

    >>> sols = [{"solution_id": f"{p}{i}", "problem_id": p, "scores": [0.9, 0.1 if i else 0.9], "first_error": i or -1}
    ...         for p in "ab" for i in (0, 1)]
    >>> rows = external_rows("prm", "mc", sols, "processbench:toy")
    >>> [(r["metric"], r["value"]) for r in rows][:2]
    [('processbench_f1', 1.0), ('first_error_acc', 1.0)]
    """
    solutions = as_solutions(test)
    if threshold is None:
        threshold, chosen_on = UNCHOSEN_THRESHOLD, f"default {UNCHOSEN_THRESHOLD}: an external set has no validation"
    pb = evaluate_processbench([], solutions, threshold=threshold)
    how = {"threshold": threshold, "chosen_on": chosen_on or "fixed", "test_set": "external"}
    auc, n_auc = step_auc(solutions)
    auc_all, n_all = step_auc(solutions, all_steps=True)
    rows = [
        metric_row(model, label_method, split, "processbench_f1", pb.f1, pb.n_wrong + pb.n_correct, **how,
                   ci=f1_ci(solutions, threshold)),
        metric_row(model, label_method, split, "first_error_acc", pb.first_error_acc, pb.n_wrong, **how),
        metric_row(model, label_method, split, "correct_acc", pb.correct_acc, pb.n_correct, **how),
        metric_row(model, label_method, split, "step_auc", auc, n_auc, steps="up to the first error"),
        metric_row(model, label_method, split, "step_auc_all", auc_all, n_all, steps="all"),
    ]
    return [{"experiment": experiment, **row} for row in rows]


def evaluate_processbench_file(model_dir: str | Path, path: str | Path, label_method: str | None = None, *,
                               threshold: float | None = None, chosen_on: str | None = None,
                               experiment: str = "prm_evaluation") -> list[dict[str, Any]]:
    """Score every solution of the ProcessBench file at ``path`` with the PRM in ``model_dir`` and return its
    :func:`external_rows` (``split``: :func:`external_split`). A malformed file is a clear error naming the line.

    Example (needs a PRM folder)::

        rows = evaluate_processbench_file("models/prm", "processbench/gsm8k.jsonl")
    """
    solutions = processbench_solutions(read_processbench(path))
    scores = load_prm(model_dir).score_batch([(s["question"], s["steps"]) for s in solutions])
    scored = [{**s, "scores": sc} for s, sc in zip(solutions, scores, strict=True)]
    return external_rows(model_version(str(model_dir)), label_method, scored, external_split(path),
                         threshold=threshold, chosen_on=chosen_on, experiment=experiment)


__all__ = ["EXTERNAL_PREFIX", "evaluate_processbench_file", "external_rows", "external_split",
           "processbench_solutions"]
