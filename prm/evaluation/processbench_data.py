"""Where ProcessBench rows come from, and how a report's figures are stored.

* :func:`processbench_files`: ``{split: file}`` from a folder (``<split>.json``, ``.jsonl`` or ``.parquet``) or one
  file; by default ``../shared/data/processbench`` beside the checkout when it is there, else the 20-row slices
  shipped in this package (:data:`SLICES`: the first 10 all-right and 10 wrong rows of each split, enough to run
  the code path on a fresh clone, far too few for a figure worth quoting; ``gsm8k_reference.jsonl`` holds the GSM8K
  test rows of its problems, for labelers that read the gold answer).
* :func:`processbench_registry_metrics` and :func:`processbench_rows`: a report as registry metrics
  (``processbench/<split>/f1`` ... at the fixed threshold) and as ``prm_evaluations`` rows (every rule, with its
  interval and where its threshold came from).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from prm.evaluation.processbench_eval import FIXED, ProcessBenchReport
from prm.reports import metric_row
from warehouse import PROJECT_ROOT

PROCESSBENCH_SPLITS = ("gsm8k", "math")  # the default splits (the paper's four: also olympiadbench, omnimath)
PROCESSBENCH_SUFFIXES = (".json", ".jsonl", ".parquet")
SHARED_PROCESSBENCH = PROJECT_ROOT.parent / "shared" / "data" / "processbench"
SLICES = Path(__file__).resolve().parent / "slices"  # gsm8k.json, math.json (20 rows each), gsm8k_reference.jsonl
SLICES_ORIGIN = f"the 20-row slices shipped in {SLICES} (a smoke figure; pass the full splits to benchmark)"
PROCESSBENCH_EXPERIMENT = "processbench"  # prm_evaluations.experiment of a PRM's ProcessBench rows
REGISTRY_PREFIX = "processbench/"  # registry metric names: processbench/<split>/<figure>


def processbench_files(data: str | Path | None, splits: Sequence[str] = ()) -> tuple[dict[str, Path], str]:
    """(``{split: file}``, where they came from) for ``splits`` (default :data:`PROCESSBENCH_SPLITS`).

    ``data`` is a folder holding ``<split>.json``/``.jsonl``/``.parquet``, or one file (one split, named by
    ``splits`` or its stem); None: :data:`SHARED_PROCESSBENCH` when present, else :data:`SLICES`.
    FileNotFoundError says what to pass.

    >>> files, origin = processbench_files(SLICES / "math.json")
    >>> list(files), origin.endswith("math.json")
    (['math'], True)
    """
    wanted = list(splits) or list(PROCESSBENCH_SPLITS)
    if data is None:
        if SHARED_PROCESSBENCH.is_dir():
            return _from_folder(SHARED_PROCESSBENCH, wanted), str(SHARED_PROCESSBENCH)
        return _from_folder(SLICES, wanted), SLICES_ORIGIN
    path = Path(data).expanduser()
    if path.is_file():
        if len(splits) > 1:
            raise FileNotFoundError(f"{path} is one file, one split, but {list(splits)} were asked for; pass a folder "
                                    "holding one file per split, or one split")
        return {splits[0] if splits else path.stem: path}, str(path)
    if not path.is_dir():
        raise FileNotFoundError(f"{path} does not exist; pass a ProcessBench file or a folder of them")
    return _from_folder(path, wanted), str(path)


def _from_folder(folder: Path, splits: Sequence[str]) -> dict[str, Path]:
    files = {}
    for split in splits:
        found = [p for suffix in PROCESSBENCH_SUFFIXES if (p := folder / f"{split}{suffix}").is_file()]
        if not found:
            held = sorted(p.name for p in folder.iterdir() if p.suffix in PROCESSBENCH_SUFFIXES)[:8]
            raise FileNotFoundError(f"no {split}.json, {split}.jsonl or {split}.parquet in {folder} (it holds {held}); "
                                    "name the split after one of its files, or pass the file")
        if len(found) > 1:
            raise FileNotFoundError(f"{folder} holds {[p.name for p in found]} for split {split!r}; keep one, or pass "
                                    "the file")
        files[split] = found[0]
    return files


def processbench_registry_metrics(report: ProcessBenchReport) -> dict[str, float]:
    """The report's fixed-threshold figures as registry metrics, ``processbench/<split>/{f1,error_acc,correct_acc,
    rows}`` (undefined figures left out: the registry holds finite numbers only)."""
    out: dict[str, float] = {}
    for r in report.results:
        if r.threshold_from != FIXED:
            continue
        for name, value in (("f1", r.f1), ("error_acc", r.error_acc), ("correct_acc", r.correct_acc),
                            ("rows", r.rows)):
            if value is not None:
                out[f"{REGISTRY_PREFIX}{r.split}/{name}"] = float(value)
    return out


def processbench_rows(report: ProcessBenchReport, origin: str) -> list[dict[str, Any]]:
    """``prm_evaluations`` rows of the report: per split and rule, F1 (its interval in the detail), error and
    correct accuracy; ``split`` is ``processbench:<split>``, the detail names the rule and the data."""
    rows = []
    for r in report.results:
        how = {"threshold": r.threshold, "threshold_from": r.threshold_from, "data": origin}
        for metric, value, n in (("processbench_f1", r.f1, r.rows), ("first_error_acc", r.error_acc, r.n_error),
                                 ("correct_acc", r.correct_acc, r.n_correct)):
            ci = {"ci": [round(v, 4) for v in r.f1_ci]} if metric == "processbench_f1" and r.f1_ci else {}
            row = metric_row(report.model, None, f"processbench:{r.split}", metric, value, n, **how, **ci)
            row["metric"] = metric if r.threshold_from == FIXED else f"{metric}@{r.threshold_from}"
            rows.append({"experiment": PROCESSBENCH_EXPERIMENT, **row})
    return rows


__all__ = ["PROCESSBENCH_EXPERIMENT", "PROCESSBENCH_SPLITS", "PROCESSBENCH_SUFFIXES", "REGISTRY_PREFIX",
           "SHARED_PROCESSBENCH", "SLICES", "SLICES_ORIGIN", "processbench_files", "processbench_registry_metrics",
           "processbench_rows"]
