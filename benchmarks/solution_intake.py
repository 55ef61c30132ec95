"""Solution intake speed: ``prm.tasks.load_solutions`` on 5,000 solutions in every format it reads.

Usage: ``.venv/bin/python benchmarks/solution_intake.py [--rows 5000]``

The rows are ProcessBench's GSM8K and MATH rows (``../shared/data/processbench``; the committed 20-row fixtures in
``tests/fixtures/processbench`` where that is absent), repeated with a unique id each, written in a temporary folder
by the project's own exporters: ProcessBench as the published JSON array, as JSONL and as Parquet, TRL stepwise,
Math-Shepherd, and plain JSONL (steps as a list, and as one solution text that ``prm.format.segment`` cuts). Each
file is read three times (``time.perf_counter``, the best one counts). The last line printed is one JSON object:
``{"rows", "data", "formats": [{"format", "seconds", "rows_per_s"}, ...]}``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from prm.export import write_math_shepherd, write_processbench, write_trl_stepwise
from prm.files import write_jsonl
from prm.format import labels_from_first_error
from prm.tasks import load_solutions

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data" / "processbench"
FIXTURES = ROOT / "prm" / "evaluation" / "slices"
REPEATS = 3


def base_rows() -> tuple[list[dict], str]:
    """ProcessBench rows (GSM8K then MATH) and where they came from."""
    for folder, names in ((SHARED, ("gsm8k.json", "math.json")), (FIXTURES, ("gsm8k.json", "math.json"))):
        if all((folder / name).is_file() for name in names):
            rows = [row for name in names for row in json.loads((folder / name).read_text(encoding="utf-8"))]
            return rows, f"../{folder.relative_to(ROOT.parent)}" if folder == SHARED else str(folder.relative_to(ROOT))
    raise SystemExit(f"no ProcessBench rows in {SHARED} or {FIXTURES}")


def solutions(n: int) -> tuple[list[dict], str]:
    """``n`` ProcessBench rows: the base rows repeated in order, each with a unique id."""
    rows, data = base_rows()
    return [{**rows[k % len(rows)], "id": f"{rows[k % len(rows)]['id']}-{k // len(rows)}"} for k in range(n)], data


def write_files(rows: list[dict], folder: Path) -> dict[str, Path]:
    """One file per format, written by the project's exporters."""
    trl = [{"prompt": r["problem"], "completions": r["steps"], "solution_id": r["id"],
            "labels": labels_from_first_error(len(r["steps"]), r["label"])} for r in rows]
    array = folder / "processbench.json"
    array.write_text(json.dumps(rows, indent=2, ensure_ascii=False), encoding="utf-8")  # the published layout
    parquet = folder / "processbench.parquet"
    pq.write_table(pa.Table.from_pylist(rows), parquet)
    writers: dict[str, Callable[[], Path]] = {
        "processbench_json": lambda: array,
        "processbench_jsonl": lambda: write_processbench(trl, folder / "processbench.jsonl"),
        "processbench_parquet": lambda: parquet,
        "trl": lambda: write_trl_stepwise(trl, folder / "trl.jsonl"),
        "math_shepherd": lambda: write_math_shepherd(trl, folder / "math_shepherd.jsonl"),
        "plain_steps": lambda: write_jsonl([{"id": r["id"], "question": r["problem"], "steps": r["steps"],
                                             "label": r["label"], "generator": r["generator"]} for r in rows],
                                           folder / "plain_steps.jsonl"),
        # one step per paragraph (segment's MATH layout), so a step that spans lines stays one step
        "plain_solution": lambda: write_jsonl([{"id": r["id"], "question": r["problem"],
                                                "solution": "\n\n".join(r["steps"])} for r in rows],
                                              folder / "plain_solution.jsonl"),
    }
    return {name: write() for name, write in writers.items()}


def best_time(path: Path, n: int) -> float:
    best = float("inf")
    for _ in range(REPEATS):
        start = time.perf_counter()
        loaded = load_solutions(path)
        best = min(best, time.perf_counter() - start)
        if len(loaded.records) + len(loaded.set_aside) != n:
            raise SystemExit(f"{path}: read {len(loaded.records)} records and set aside {len(loaded.set_aside)}, "
                             f"expected {n} rows")
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=5000)
    args = parser.parse_args()
    rows, data = solutions(args.rows)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        files = write_files(rows, Path(tmp))
        for name, path in files.items():
            seconds = best_time(path, args.rows)
            results.append({"format": name, "seconds": round(seconds, 4), "rows_per_s": round(args.rows / seconds),
                            "mb": round(path.stat().st_size / 1e6, 1)})
            print(f"{name:22s} {seconds:8.3f} s  {args.rows / seconds:10.0f} rows/s", file=sys.stderr)
        intake = whole_intake(files["processbench_json"])
    print(json.dumps({"rows": args.rows, "data": data, "formats": results, "intake": intake}))


def whole_intake(path: Path) -> dict:
    """The pipeline's whole intake of the file (read, reference join, solutions/steps rows, answers graded in the
    verifier pool) with the GSM8K test file as reference when ../shared has it: seconds and counts."""
    from prm.datagen import intake_rows, read_intake

    reference = SHARED.parent / "gsm8k" / "test.jsonl"
    start = time.perf_counter()
    intake = read_intake(path, source="bench", reference=reference if reference.is_file() else None)
    read_s = time.perf_counter() - start
    _, _, counts = intake_rows(intake.loaded)
    return {"read_and_reference_s": round(read_s, 3), "total_s": round(time.perf_counter() - start, 3),
            "reference_matched": intake.n_reference_matched, **counts.metadata()}


if __name__ == "__main__":
    main()
