"""A PRM folder scored on the held-out splits: its evaluation table rows (with its step sensitivity on the test
split's sibling steps) and its ``step_scores`` rows."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prm.best_of_n import DEFAULT_BON_N
from prm.evaluation.perturbations import PerturbationRun, perturbation_report, perturbation_rows, perturbation_run
from prm.first_error import as_solutions, step_truth_note
from prm.metrics import SiblingPair, score_pairs, sibling_pairs, step_sensitivity
from prm.models import model_version
from prm.reports import evaluation_table, sensitivity_row
from prm.scoring import Scorer, load_prm, step_score_rows


def _score(scorer: Scorer, solutions: Sequence[dict], model: str) -> tuple[list[dict], list[dict]]:
    scored = scorer.score_batch([(s["question"], s["steps"]) for s in solutions])
    evaluated = [{**s, "scores": sc} for s, sc in zip(solutions, scored, strict=True)]
    return evaluated, step_score_rows(model, solutions, scored)


@dataclass(frozen=True)
class FolderEvaluation:
    """A PRM folder scored on the held-out splits."""

    model: str  # model_version of the folder
    rows: list[dict[str, Any]]  # prm_evaluations rows (plus baselines and references when asked)
    scores: list[dict[str, Any]]  # step_scores rows
    scored: dict[str, list[dict[str, Any]]]  # per split: the solutions with their ``scores``
    bon_n: int  # N of best-of-N actually used (at most the solutions every test problem has)
    siblings: dict[str, tuple[list[SiblingPair], list[float], list[float]]]  # per test set: pairs and scores
    # Per test set: off-policy perturbation pairs and their scores (prm.evaluation.perturbations)
    perturbations: dict[str, PerturbationRun] = field(default_factory=dict)


def usable_bon_n(solutions: Sequence[dict], wanted: int = DEFAULT_BON_N) -> int:
    """``wanted``, or fewer when no test problem has that many solutions (the demo samples 4 per problem).

    >>> usable_bon_n([{"problem_id": "p"}] * 4 + [{"problem_id": "q"}] * 2)
    4
    """
    counts: dict[str, int] = {}
    for s in solutions:
        counts[s["problem_id"]] = counts.get(s["problem_id"], 0) + 1
    return max(1, min(wanted, max(counts.values(), default=1)))


def evaluate_folder(model_dir: Path, heldout: dict[str, list[dict]], label_method: str | None,
                    bon_n: int = DEFAULT_BON_N, baselines: bool = True, experiment: str = "prm_evaluation",
                    test_sets: Mapping[str, Sequence[dict]] | None = None) -> FolderEvaluation:
    """Score the held-out solutions with the PRM in ``model_dir`` and evaluate it (see the module docstring).

    ``test_sets`` names subsets of ``heldout["test"]`` (:func:`prm.evaluation.heldout.split_test_sets`) evaluated
    apart, each row's ``split`` being its name; by default the whole test split, as ``test``."""
    model = model_version(str(model_dir))
    scorer = load_prm(model_dir)
    val, val_scores = _score(scorer, heldout["val"], model)
    test, test_scores = _score(scorer, heldout["test"], model)
    n = usable_bon_n(test, bon_n)
    scored = {s["solution_id"]: s for s in test}
    rows: list[dict[str, Any]] = []
    siblings, perturbations = {}, {}
    for name, subset in (test_sets or {"test": heldout["test"]}).items():
        chosen = [scored[s["solution_id"]] for s in subset]
        rows += evaluation_table(model, label_method, val, chosen, split=name, bon_n=usable_bon_n(chosen, n),
                                 baselines=baselines, experiment=experiment)
        pairs = sibling_pairs(chosen)
        right, wrong = score_pairs(scorer.score_batch, {s["problem_id"]: s["question"] for s in chosen}, pairs)
        siblings[name] = (pairs, right, wrong)
        rows.append(sensitivity_row(model, label_method, step_sensitivity(pairs, right, wrong), split=name,
                                    experiment=experiment, **step_truth_note(as_solutions(chosen))))
        threshold = _threshold(rows, model, name)
        if threshold is not None:
            perturbations[name] = perturbation_run(scorer.score_batch, chosen, threshold)
            rows += perturbation_rows(model, label_method, perturbation_report([perturbations[name]]), split=name,
                                      experiment=experiment)
    return FolderEvaluation(model, rows, val_scores + test_scores, {"val": val, "test": test}, n, siblings,
                            perturbations)


def _threshold(rows: Sequence[Mapping[str, Any]], model: str, split: str) -> float | None:
    """The step threshold the evaluation chose on validation for ``model`` (None without step truth)."""
    row = next((r for r in rows if r["model"] == model and r["split"] == split and r["metric"] == "processbench_f1"),
               None)
    threshold = json.loads(row["detail_json"] or "{}").get("threshold") if row else None
    return None if threshold is None else float(threshold)
