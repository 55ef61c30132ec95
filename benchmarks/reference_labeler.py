"""ProcessBench F1 of the ``sympy_ref`` labeler (SymPy + the reference solution's values) against the plain SymPy
floor (``sympy``), on human first-error labels.

Usage: ``.venv/bin/python benchmarks/reference_labeler.py [--data ../shared/data] [--n-boot 1000]``.

Reads ProcessBench's GSM8K (400 rows) and MATH (1000 rows) splits with :func:`prm.tasks.load_solutions`, attaches
each problem's gold answer and reference solution where a reference file has the problem (every GSM8K row from
``gsm8k/test.jsonl``, 112 MATH rows from ``math500/test.jsonl``; the rest have nothing and fall back to the plain
arithmetic check), builds the partition rows a warehouse would hold (``problems``, ``solutions`` graded as the
solutions asset grades them, ``steps``) and runs each labeler's ``label`` on them. A labeler's predicted first error
is its first step labeled wrong, -1 when none; the metric is :func:`prm.metrics.processbench.official_score`.

Rows are split by :func:`prm.metrics.processbench.choice_part`: the rules of ``sympy_ref`` were chosen on the
``validation`` rows (GSM8K and MATH); ``report`` rows were not looked at. Intervals are 95% bootstrap intervals
resampling problems (:func:`prm.metrics.stats.problem_bootstrap_ci`). ``sympy_ref[gold_only]`` is the same
labeler without the reference solution (the question's numbers and the gold answer only).

Prints a table, then one JSON line: ``{"labelers": [{"method", "split", "part", "rows", "error_acc", "correct_acc",
"f1", "f1_ci", "seconds_per_solution"}, ...]}``. ``seconds_per_solution`` is the labeler's wall time over the split
(verifier pool already started) divided by its solutions.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

# Run as a script, this folder heads sys.path: the project root goes first, for benchmarks.* and tests.*.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from prm.labeling import ReferenceConfig, get_labeler
from prm.metrics import REPORT, VALIDATION, choice_part, official_score, problem_bootstrap_ci
from prm.tasks import attach_reference, load_solutions
from verifiers import check_steps, extract_answer, grade_answers

SPLITS = {"gsm8k": ("processbench/gsm8k.json", "gsm8k/test.jsonl"),
          "math": ("processbench/math.json", "math500/test.jsonl")}
# (name in the table, registry name, config): the floor, the new labeler, and the new labeler with the gold only.
LABELERS = (("sympy", "sympy", None), ("sympy_ref", "sympy_ref", None),
            ("sympy_ref[gold_only]", "sympy_ref", ReferenceConfig(use_reference=False)))


def partition(split: str, data: Path) -> tuple[dict[str, list[dict[str, Any]]], list[dict[str, Any]]]:
    """The warehouse-shaped rows of one ProcessBench split, and one ``{"id", "problem_id", "label", "part",
    "has_gold"}`` per solution."""
    bench, reference = SPLITS[split]
    loaded, _ = attach_reference(load_solutions(data / bench, fmt="processbench", source=split), data / reference)
    problems: dict[str, dict[str, Any]] = {}
    solutions, steps, index = [], [], []
    for rec in loaded.records:
        problems.setdefault(rec.problem_id, {"problem_id": rec.problem_id, "task": split, "question": rec.question,
                                             "gold_answer": rec.gold_answer, "gold_solution": rec.gold_solution})
        text = "\n\n".join(rec.steps)
        solutions.append({"solution_id": rec.solution_id, "problem_id": rec.problem_id, "text": text,
                          "final_answer": extract_answer(text), "status": "ok"})
        steps += [{"solution_id": rec.solution_id, "problem_id": rec.problem_id, "step_idx": k, "text": t}
                  for k, t in enumerate(rec.steps)]
        index.append({"id": rec.solution_id, "problem_id": rec.problem_id, "label": rec.first_error,
                      "part": choice_part(rec.question), "has_gold": rec.gold_answer is not None})
    # Graded as the solutions asset grades them (prm.datagen.solutions): the extracted answer against the gold.
    gradable = [s for s in solutions if s["final_answer"] is not None and problems[s["problem_id"]]["gold_answer"]]
    grades = grade_answers([(s["final_answer"], problems[s["problem_id"]]["gold_answer"]) for s in gradable])
    for s, grade in zip(gradable, grades, strict=True):
        s["is_correct"] = grade
    return {"problems": list(problems.values()), "solutions": solutions, "steps": steps}, index


def predicted_first_errors(rows: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Each solution's first step labeled wrong, -1 when none (ProcessBench's reading of a step labeler)."""
    wrong: dict[str, list[int]] = defaultdict(list)
    for r in rows:
        wrong[r["solution_id"]] += [int(r["step_idx"])] if r["hard_label"] is False else []
    return {sid: min(steps) if steps else -1 for sid, steps in wrong.items()}


def _f1(problems: list[list[tuple[int, int]]]) -> float | None:
    pairs = [p for problem in problems for p in problem]
    return official_score([y for y, _ in pairs], [p for _, p in pairs]).f1


def score(index: Sequence[Mapping[str, Any]], predicted: Mapping[str, int], n_boot: int) -> dict[str, Any]:
    """Official figures of the rows in ``index`` with a problem-bootstrap interval of F1."""
    labels = [int(r["label"]) for r in index]
    preds = [predicted.get(r["id"], -1) for r in index]
    s = official_score(labels, preds)
    by_problem: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for y, p, r in zip(labels, preds, index, strict=True):
        by_problem[r["problem_id"]].append((y, p))
    ci = problem_bootstrap_ci(list(by_problem.values()), _f1, n_boot=n_boot)
    return {"rows": len(index), "error_acc": s.error_acc, "correct_acc": s.correct_acc, "f1": s.f1,
            "f1_ci": None if ci is None else [round(ci[0], 4), round(ci[1], 4)]}


def _parts(split: str, index: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    parts = [(VALIDATION, [r for r in index if r["part"] == VALIDATION]),
             (REPORT, [r for r in index if r["part"] == REPORT]), ("all", index)]
    if split == "math":  # the rows whose problem has a gold answer and a reference solution (MATH500)
        parts += [(f"{p}+gold", [r for r in rows if r["has_gold"]]) for p, rows in parts]
    return parts


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, list):
        return f"[{value[0]:.3f}, {value[1]:.3f}]"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    parser.add_argument("--n-boot", type=int, default=1000)
    args = parser.parse_args(argv)
    check_steps(["1 + 1 = 2"])  # start the verifier pool outside the timings
    results: list[dict[str, Any]] = []
    for split in SPLITS:
        rows, index = partition(split, args.data)
        print(f"{split}: {len(index)} solutions, {len(rows['problems'])} problems, "
              f"{sum(r['has_gold'] for r in index)} with a reference", flush=True)
        for name, method, config in LABELERS:
            start = time.perf_counter()
            run = get_labeler(method, config).label(rows)
            seconds = (time.perf_counter() - start) / len(index)
            print(f"  {name}: {seconds * 1000:.1f} ms per solution; rules {run.extra.get('counts', {})}", flush=True)
            predicted = predicted_first_errors(run.rows())
            for part, subset in _parts(split, index):
                if subset:
                    results.append({"method": name, "split": split, "part": part, **score(subset, predicted,
                                    args.n_boot), "seconds_per_solution": round(seconds, 5)})
    columns = ("method", "split", "part", "rows", "error_acc", "correct_acc", "f1", "f1_ci", "seconds_per_solution")
    print("| " + " | ".join(columns) + " |\n|" + "---|" * len(columns))
    for r in results:
        print("| " + " | ".join(_cell(r[c]) for c in columns) + " |")
    print(json.dumps({"labelers": results}))


if __name__ == "__main__":
    main()
