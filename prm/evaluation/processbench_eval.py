"""ProcessBench end to end: a PRM or a generative critic on ProcessBench splits, scored with the official metric
(:func:`prm.metrics.processbench.official_score`), each F1 with its 95% interval over problems.

PRM: every row's steps are scored, and the predicted first error is the first step whose score is below the
threshold (-1: none is). Two threshold rules, both reported per split: ``fixed`` (:data:`FIXED_THRESHOLD`, 0.5 on
P(good): what published PRM figures use) and one chosen on the *other* splits given (the threshold maximising
official F1 there: gsm8k's on math, math's on gsm8k). A threshold is never chosen on the rows it is reported on, so
with a single split only ``fixed`` is reported, and the report's notes say so.

A row longer than the PRM's context is read as far as it fits: a causal PRM's score at a step depends only on the
text before it, so the steps read score as a longer context would score them. A flagged step among them is the
prediction; when none is flagged the prediction is None (a miss, like an unreadable critique), since the error may
lie in the unread steps.

Critic (:mod:`prm.evaluation.critic`): one prediction per row, no threshold: ``threshold`` is None and
``threshold_from`` is ``"critic"``.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from prm.evaluation.critic import Critic, CriticStats
from prm.files import dumps_strict, write_jsonl
from prm.first_error import FLAG_ALL, NEVER_FLAG, UNCHOSEN_THRESHOLD, predict_first_error, verdict_f1
from prm.format import ContextOverflowError
from prm.metrics import official_score, problem_bootstrap_ci
from prm.tasks import load_solutions

if TYPE_CHECKING:
    from prm.scoring import Scorer

FIXED_THRESHOLD = UNCHOSEN_THRESHOLD  # P(good) = 0.5: the cut of the published PRM figures (Qwen2.5-Math-PRM's)
FIXED, CRITIC = "fixed", "critic"  # threshold_from of the fixed rule and of a critic's predictions


# --- PRM reads and threshold rules ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class StepReads:
    """A PRM's scores of the steps of one solution it read: all of them (``complete``) or the first ones that fit."""

    scores: tuple[float, ...]
    complete: bool

    def predict(self, threshold: float) -> int | None:
        """The first step scored below ``threshold``; -1 when none is and every step was read; None otherwise.

        >>> StepReads((0.9, 0.2), False).predict(0.5), StepReads((0.9,), True).predict(0.5)
        (1, -1)
        >>> print(StepReads((0.9,), False).predict(0.5))
        None
        """
        k = predict_first_error(self.scores, threshold)
        return k if k >= 0 or self.complete else None


def readable_steps(scorer: Scorer, problem: str, steps: Sequence[str]) -> int:
    """How many leading steps ``scorer`` reads within its context (binary search over its ``encode``; a scorer
    without ``encode`` is assumed to read them all)."""
    encode = getattr(scorer, "encode", None)
    if encode is None:
        return len(steps)

    def fits(m: int) -> bool:
        try:
            encode(problem, list(steps[:m]))
        except ContextOverflowError:
            return False
        return True

    if fits(len(steps)):
        return len(steps)
    lo, hi = 0, len(steps)  # steps[:lo] fits (nothing always does), steps[:hi] does not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo


def read_steps(scorer: Scorer, items: Sequence[tuple[str, Sequence[str]]], *, ids: Sequence[str] | None = None,
               batch_size: int | None = None) -> list[StepReads]:
    """:class:`StepReads` of every ``(problem, steps)`` with ``scorer.score_batch``, each as far as it fits."""
    ids = list(ids) if ids is not None else [str(i) for i in range(len(items))]
    counts = [readable_steps(scorer, problem, steps) for problem, steps in items]
    todo = [i for i, m in enumerate(counts) if m > 0]
    scored = scorer.score_batch([(items[i][0], list(items[i][1][:counts[i]])) for i in todo],
                                batch_size=batch_size) if todo else []
    reads = [StepReads((), False) for _ in items]
    for i, row in zip(todo, scored, strict=True):
        values = tuple(float(x) for x in row)
        if len(values) != counts[i] or not all(0.0 <= x <= 1.0 for x in values):  # NaN fails both
            raise ValueError(f"row {ids[i]!r}: the PRM returned {len(values)} scores {list(values)[:4]} for "
                             f"{counts[i]} steps; a PRM scorer returns one P(good) in [0, 1] per step")
        reads[i] = StepReads(values, counts[i] == len(items[i][1]))
    return reads


def choose_threshold_on(reads: Sequence[StepReads], labels: Sequence[int]) -> tuple[float | None, str]:
    """(the threshold with the best official F1 on these rows, ""), or (None, why none can be chosen).

    The candidates are :func:`prm.first_error.scores.candidate_thresholds`' (0, the midpoints between adjacent
    distinct scores, just above 1) and the lowest wins a tie, as :func:`prm.first_error.scores.choose_threshold`;
    rows read in part count in the denominators and match only where a read step is flagged.

    >>> choose_threshold_on([StepReads((0.75, 0.25), True), StepReads((0.875, 0.5), True)], [1, -1])
    (0.375, '')
    """
    wrong = [(r, y) for r, y in zip(reads, labels, strict=True) if y >= 0]
    right = [r for r, y in zip(reads, labels, strict=True) if y < 0]
    if not wrong or not right:
        return None, (f"{len(wrong)} rows with an error and {len(right)} all-right rows; official F1 needs both "
                      "to choose a threshold")
    distinct = np.unique(np.fromiter((x for r in reads for x in r.scores), dtype=float))
    grid = np.asarray([NEVER_FLAG, *((distinct[:-1] + distinct[1:]) / 2).tolist(), FLAG_ALL], dtype=float)
    # A row with an error is matched for thresholds in (score at the error, lowest score before it].
    spans = [(r.scores[y], min(r.scores[:y], default=math.inf)) for r, y in wrong if y < len(r.scores)]
    starts = np.sort([a for a, b in spans if a < b])
    ends = np.sort([b for a, b in spans if a < b])
    matched = np.searchsorted(starts, grid, side="left") - np.searchsorted(ends, grid, side="left")
    # An all-right row read whole is accepted while the threshold is at most its lowest score.
    lowest = np.sort([min(r.scores) for r in right if r.complete])
    accepted = len(lowest) - np.searchsorted(lowest, grid, side="left")
    a, b = matched / len(wrong), accepted / len(right)
    f1 = np.divide(2 * a * b, a + b, out=np.zeros_like(a), where=(a + b) > 0)
    return float(grid[int(np.argmax(f1))]), ""


def f1_interval(problem_ids: Sequence[str], labels: Sequence[int], predicted: Sequence[int | None], *,
                seed: int = 0) -> tuple[float, float] | None:
    """95% bootstrap interval of the official F1 over problems (a problem's rows resampled together), by
    :func:`prm.first_error.verdict_f1`; None predictions are misses.

    >>> f1_interval(["a", "a", "b", "b"], [-1, 1, -1, 1], [-1, 1, -1, 1])
    (1.0, 1.0)
    """
    per_problem: dict[str, list[tuple[int | None, int]]] = defaultdict(list)
    for pid, y, p in zip(problem_ids, labels, predicted, strict=True):
        per_problem[pid].append((p, y))
    return problem_bootstrap_ci(list(per_problem.values()), verdict_f1, seed=seed)


# --- splits and the report -----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SplitRows:
    """The rows of one split as the evaluation uses them."""

    split: str
    path: str
    ids: tuple[str, ...]
    problem_ids: tuple[str, ...]
    problems: tuple[str, ...]
    steps: tuple[tuple[str, ...], ...]
    labels: tuple[int, ...]
    set_aside: int = 0  # rows the reader set aside (an empty step, a repeated id), named in the report's notes

    @property
    def items(self) -> list[tuple[str, tuple[str, ...]]]:
        return list(zip(self.problems, self.steps, strict=True))


def spread(n: int, limit: int | None) -> list[int]:
    """``limit`` row indices of ``n``, evenly spaced from the first (all of them when ``limit`` is None or >= n):
    ProcessBench lists a split's error rows first, so its first rows would hold no all-right row.

    >>> spread(10, 4), spread(3, 5)
    ([0, 3, 5, 8], [0, 1, 2])
    """
    if limit is not None and limit < 1:
        raise ValueError(f"limit {limit} keeps no row; pass a positive number or None")
    if limit is None or limit >= n:
        return list(range(n))
    return [-(-i * n // limit) for i in range(limit)]  # ceil(i * n / limit): the first row of each of limit bins


def load_split(split: str, path: str | Path, *, limit: int | None = None) -> SplitRows:
    """A ProcessBench file (JSON array, JSONL or the hub's Parquet) read with :func:`prm.tasks.load_solutions`, or
    ``limit`` of its rows evenly spaced through it (:func:`spread`); a row without a label is a clear error."""
    loaded = load_solutions(path, fmt="processbench")
    if not loaded.records:
        raise ValueError(f"{path}: no usable row ({loaded.summary()}); give a ProcessBench file with labelled rows")
    unlabelled = next((r for r in loaded.records if r.first_error is None), None)
    if unlabelled is not None:
        raise ValueError(f"{path}:{unlabelled.line}: the row has no label; every ProcessBench row needs its first "
                         "wrong step (-1: all right)")
    recs = [loaded.records[i] for i in spread(len(loaded.records), limit)]
    return SplitRows(split, str(path), tuple(r.solution_id for r in recs), tuple(r.problem_id for r in recs),
                     tuple(r.question for r in recs), tuple(r.steps for r in recs),
                     tuple(int(r.first_error) for r in recs), len(loaded.set_aside))


@dataclass(frozen=True)
class SplitResult:
    """One split under one rule: the official figures (fractions), the F1 interval and where the threshold came from."""

    split: str
    rows: int
    error_acc: float | None
    correct_acc: float | None
    f1: float | None
    f1_ci: tuple[float, float] | None
    threshold: float | None
    threshold_from: str  # "fixed", the split(s) it was chosen on ("math", "gsm8k+olympiadbench"), or "critic"
    n_error: int = 0
    n_correct: int = 0
    n_unread: int = 0  # predictions that are None: the critic gave no index, or the PRM did not read far enough
    n_partial: int = 0  # PRM rows read in part (their steps past the context unscored)

    def to_json(self) -> dict[str, Any]:
        """The eight keys of the report's JSON line."""
        return {"split": self.split, "rows": self.rows, "error_acc": self.error_acc, "correct_acc": self.correct_acc,
                "f1": self.f1, "f1_ci": list(self.f1_ci) if self.f1_ci else None, "threshold": self.threshold,
                "threshold_from": self.threshold_from}

    def line(self) -> str:
        """One human-readable row, in the official script's percentages."""
        def pct(x: float | None) -> str:
            return "  n/a" if x is None else f"{100 * x:5.1f}"

        rule = (CRITIC if self.threshold_from == CRITIC else f"{FIXED} {self.threshold:.4g}"
                if self.threshold_from == FIXED else f"on {self.threshold_from} "
                + ("(none)" if self.threshold is None else f"{self.threshold:.4g}"))
        ci = "" if self.f1_ci is None else f" [{100 * self.f1_ci[0]:.1f}, {100 * self.f1_ci[1]:.1f}]"
        extra = [f"{self.n_partial} read in part"] if self.n_partial else []
        extra += [f"{self.n_unread} without a prediction"] if self.n_unread else []
        return (f"{self.split:<10} {rule:<22} rows {self.rows:>5}  error acc {pct(self.error_acc)}  correct acc "
                f"{pct(self.correct_acc)}  F1 {pct(self.f1)}{ci}" + (f"  ({', '.join(extra)})" if extra else ""))


@dataclass(frozen=True)
class ProcessBenchReport:
    """Every split under every rule, the per-row predictions of the fixed rule (a critic's own), and notes."""

    model: str
    results: tuple[SplitResult, ...]
    predictions: tuple[dict[str, Any], ...]  # {"id", "split", "label", "predicted"} per row
    notes: tuple[str, ...] = ()
    seconds: float = 0.0

    def json_line(self) -> str:
        """``{"splits": [...], "prm": model}``: one line, strict JSON."""
        return dumps_strict({"splits": [r.to_json() for r in self.results], "prm": self.model})

    def lines(self) -> list[str]:
        """The notes, then one row per split and rule."""
        return [f"note: {n}" for n in self.notes] + [r.line() for r in self.results]

    def write_predictions(self, path: str | Path) -> Path:
        """The predictions as JSONL, atomically: :func:`prm.metrics.processbench.score_rows` on one split's rows
        gives that split's fixed-rule (or critic) figures exactly."""
        return write_jsonl(self.predictions, path)


def _result(rows: SplitRows, predicted: Sequence[int | None], threshold: float | None, threshold_from: str,
            n_partial: int, seed: int) -> SplitResult:
    score = official_score(rows.labels, predicted)
    return SplitResult(rows.split, len(rows.labels), score.error_acc, score.correct_acc, score.f1,
                       f1_interval(rows.problem_ids, rows.labels, predicted, seed=seed), threshold, threshold_from,
                       score.n_error, score.n_correct, sum(p is None for p in predicted), n_partial)


def _predictions(rows: SplitRows, predicted: Sequence[int | None]) -> list[dict[str, Any]]:
    return [{"id": i, "split": rows.split, "label": y, "predicted": p}
            for i, y, p in zip(rows.ids, rows.labels, predicted, strict=True)]


def evaluate_processbench_files(scorer_or_prm: Any, files: Mapping[str, str | Path | SplitRows], *,
                                limit: int | None = None,
                                model: str | None = None, threshold: float = FIXED_THRESHOLD, seed: int = 0,
                                batch_size: int | None = None) -> ProcessBenchReport:
    """Evaluate a PRM (a loaded scorer with ``score_batch``, or a PRM folder for :func:`prm.scoring.load_prm`) or a
    :class:`Critic` on ProcessBench files (``{split: path}``; ``limit``: that many rows of each, :func:`spread`; or
    ``{split: SplitRows}`` already read by :func:`load_split`).

    A PRM is reported per split at ``threshold`` (``fixed``) and at the threshold chosen on the other splits; a
    critic once per split (``critic``). ``model`` names it in the report (default: the folder's
    :func:`prm.models.model_version`, the critic's ``name``, else the scorer's class). The predictions are the
    fixed rule's (a critic's own).

    Example (needs a PRM folder)::

        report = evaluate_processbench_files("models/prm", {"gsm8k": "processbench/gsm8k.json"})
        print(report.json_line())
    """
    if not files:
        raise ValueError("no split given; pass {split: path}, e.g. {'gsm8k': '.../processbench/gsm8k.json'}")
    if not 0.0 <= threshold <= FLAG_ALL:
        raise ValueError(f"threshold={threshold} is outside [0, 1]; scores are P(good)")
    started = time.perf_counter()
    splits = {name: rows if isinstance(rows, SplitRows) else load_split(name, rows, limit=limit)
              for name, rows in files.items()}
    notes = [f"{s.split}: {s.set_aside} rows of {s.path} set aside (an empty step or a repeated id); the figures "
             "leave them out" for s in splits.values() if s.set_aside]
    if isinstance(scorer_or_prm, Critic):
        report = _evaluate_critic(scorer_or_prm, splits, model or scorer_or_prm.name, seed)
    else:
        owned = isinstance(scorer_or_prm, str | Path)
        if owned:
            from prm.models import model_version
            from prm.scoring import load_prm

            model = model or model_version(Path(scorer_or_prm))
            scorer = load_prm(scorer_or_prm)
        else:
            scorer = scorer_or_prm
        try:
            report = _evaluate_prm(scorer, splits, model or type(scorer).__name__, threshold, seed, batch_size)
        finally:
            if owned:
                scorer.close()
    return ProcessBenchReport(report.model, report.results, report.predictions, (*notes, *report.notes),
                              round(time.perf_counter() - started, 2))


def _evaluate_critic(critic: Critic, splits: Mapping[str, SplitRows], model: str, seed: int) -> ProcessBenchReport:
    results, predictions, notes = [], [], []
    for rows in splits.values():
        predicted = list(critic.first_errors(rows.items))
        if len(predicted) != len(rows.labels):
            raise ValueError(f"the critic gave {len(predicted)} answers for {len(rows.labels)} rows of {rows.split}")
        stats = getattr(critic, "stats", None)
        if isinstance(stats, CriticStats) and (stats.failed or stats.cut or stats.no_index):
            notes.append(f"{rows.split}: {stats.failed} requests failed, {stats.cut} critiques cut at the token "
                         f"budget, {stats.no_index} without a \\boxed{{}} integer"
                         + (f"; first errors: {stats.errors}" if stats.errors else ""))
        results.append(_result(rows, predicted, None, CRITIC, 0, seed))
        predictions += _predictions(rows, predicted)
    return ProcessBenchReport(model, tuple(results), tuple(predictions), tuple(notes))


def _evaluate_prm(scorer: Scorer, splits: Mapping[str, SplitRows], model: str, threshold: float, seed: int,
                  batch_size: int | None) -> ProcessBenchReport:
    reads = {name: read_steps(scorer, rows.items, ids=rows.ids, batch_size=batch_size)
             for name, rows in splits.items()}
    results, predictions, notes = [], [], []
    if len(splits) == 1:
        notes.append(f"one split ({next(iter(splits))}): only the fixed threshold {threshold} is reported; a chosen "
                     "one needs another split to choose it on (a threshold is never chosen on the rows it is "
                     "reported on)")
    for name, rows in splits.items():
        partial = sum(not r.complete for r in reads[name])
        fixed = [r.predict(threshold) for r in reads[name]]
        results.append(_result(rows, fixed, threshold, FIXED, partial, seed))
        predictions += _predictions(rows, fixed)
        others = [o for o in splits if o != name]
        if not others:
            continue
        chosen, why = choose_threshold_on([r for o in others for r in reads[o]],
                                          [y for o in others for y in splits[o].labels])
        source = "+".join(others)
        if chosen is None:
            notes.append(f"{name}: no threshold could be chosen on {source} ({why}); its chosen-threshold row is empty")
            results.append(SplitResult(name, len(rows.labels), None, None, None, None, None, source,
                                       n_partial=partial))
            continue
        results.append(_result(rows, [r.predict(chosen) for r in reads[name]], chosen, source, partial, seed))
    return ProcessBenchReport(model, tuple(results), tuple(predictions), tuple(notes))


__all__ = ["CRITIC", "FIXED", "FIXED_THRESHOLD", "ProcessBenchReport", "SplitResult", "SplitRows", "StepReads",
           "choose_threshold_on", "evaluate_processbench_files", "f1_interval", "load_split",
           "read_steps", "readable_steps", "spread"]
