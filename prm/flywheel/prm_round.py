"""A round's PRM: retrained (warm-started) on the window's labels, then scored with the PRMs before it on the
round's held-out samples, where the policy has moved since they were trained."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prm.evaluation import heldout_solutions
from prm.files import atomic_write_dir
from prm.first_error import ScoredSolution, as_solutions, evaluate_processbench, first_error_predictions
from prm.flywheel.config import FlywheelConfig
from prm.flywheel.rounds import round_source
from prm.metrics import f1_difference_ci, processbench_f1
from prm.scoring import load_prm
from prm.training import TrainingSet, build_training_set, stratified_splits, train_prm
from warehouse import connect


def train_round_prm(root: str | Path, k: int, config: FlywheelConfig, out_dir: Path,
                    parent: Path | None) -> TrainingSet:
    """Train round ``k``'s PRM into ``out_dir`` (swapped in whole: a killed run leaves the old folder or none)
    on the window's labels, starting from ``parent`` when warm-starting; returns its training set."""
    ts = build_training_set(root, config.training_set(k))
    atomic_write_dir(out_dir, lambda tmp: train_prm(ts, tmp, config.prm_train(None if parent is None
                                                                               else str(parent))))
    return ts


@dataclass(frozen=True)
class RoundF1:
    """ProcessBench F1 of several PRMs on one round's held-out samples (threshold each chose on validation)."""

    f1: dict[str, float | None]  # PRM name -> test F1
    n_test: int  # held-out solutions with exact truth
    predictions: dict[str, dict[str, int]]  # PRM name -> solution_id -> predicted first wrong step
    truth: dict[str, int]

    def difference(self, a: str, b: str) -> dict[str, float | None]:
        """F1 of ``a`` minus ``b`` with a paired bootstrap 95% interval over the held-out solutions."""
        return f1_difference_ci(self.predictions[a], self.predictions[b], self.truth)


def _scored(folder: Path, solutions: list[dict[str, Any]]) -> list[ScoredSolution]:
    scores = load_prm(folder).score_batch([(s["question"], s["steps"]) for s in solutions])
    return as_solutions([{**s, "scores": sc} for s, sc in zip(solutions, scores, strict=True)])


def round_f1(root: str | Path, k: int, config: FlywheelConfig, prms: Mapping[str, Path]) -> RoundF1:
    """Score each PRM in ``prms`` on round ``k``'s validation and test samples (the split round ``k``'s PRM
    trained under, so none of them saw these problems) and report test ProcessBench F1 per PRM."""
    con = connect(root)
    heldout = heldout_solutions(con, stratified_splits(con, config.training_set(k)), source=round_source(k))
    if not heldout["test"]:
        raise ValueError(f"round {k} has no held-out samples with exact truth; raise per_level or test_share")
    f1: dict[str, float | None] = {}
    predictions: dict[str, dict[str, int]] = {}
    truth: dict[str, int] = {}
    for name, folder in prms.items():
        val, test = _scored(folder, heldout["val"]), _scored(folder, heldout["test"])
        threshold = evaluate_processbench(val, test).threshold
        predictions[name], truth = first_error_predictions(test, threshold)
        f1[name] = processbench_f1(predictions[name], truth)
    return RoundF1(f1, len(truth), predictions, truth)
