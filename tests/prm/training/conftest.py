"""Fixtures for PRM training: a tiny base model folder and a small labeled warehouse.

The base model is the tiny LM of tests/tiny_models.py (fixture ``tiny_models``) at this directory's context.
The warehouse holds arithmetic-looking solutions whose bad steps write a wrong result, with labels of two
methods, exact truth, and a few solutions the methods left unlabeled.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tiny_models import TinyModels
from warehouse import Warehouse

DAY = "2026-11-20"
N_PROBLEMS = 24  # enough for all three splits at the default shares, small enough to build in ~1 s
TINY_CONTEXT = 160  # positions of the tiny base; a 20-step solution overflows it


@pytest.fixture(scope="session")
def tiny_base(tiny_models: TinyModels) -> Path:
    """A randomly initialised causal LM folder (model + tokenizer) that AutoModelForTokenClassification loads."""
    return tiny_models.lm(TINY_CONTEXT)


def solution_steps(p: int, s: int) -> tuple[list[str], list[bool]]:
    """Steps and truth of solution ``s`` of problem ``p``: problem p has 1 + p % 4 gold steps; odd solutions
    go wrong at their last step (writing the result plus one)."""
    n = 1 + p % 4
    steps, truth = [], []
    for k in range(n):
        wrong = s % 2 == 1 and k == n - 1
        steps.append(f"{p}+{k} = {p + k + int(wrong)}")
        truth.append(not wrong)
    return steps, truth


def fill_warehouse(wh: Warehouse) -> Warehouse:
    """Problems p00..p23, two solutions each; method ``mc`` labels every step (hard and soft), ``sympy`` hard
    only, ``consensus`` the solutions of even problems. Solution 1 of p03 has an unverifiable mc step, and
    solution 0 of p01 no mc labels at all."""
    kw = {"source": "arith", "day": DAY}
    problems, solutions, steps, labels = [], [], [], []
    for p in range(N_PROBLEMS):
        pid = f"p{p:02d}"
        n = 1 + p % 4
        problems.append({"problem_id": pid, "task": "arith_chain", "split": "test", "question": f"{p} plus {n}",
                         "gold_answer": "0", "n_gold_steps": n})
        for s in range(2):
            sid = f"{pid}-s{s}"
            texts, truth = solution_steps(p, s)
            text = "\n".join(texts)
            solutions.append({"solution_id": sid, "problem_id": pid, "sample_idx": s, "text": text,
                              "n_steps": len(texts), "is_correct": all(truth), "status": "ok", "model": "m"})
            start = 0
            for k, (t, ok) in enumerate(zip(texts, truth, strict=True)):
                steps.append({"solution_id": sid, "problem_id": pid, "step_idx": k, "text": t,
                              "char_start": start, "char_end": start + len(t), "is_correct_truth": ok})
                start += len(t) + 1
                base = {"solution_id": sid, "problem_id": pid, "step_idx": k, "labeler_version": "t"}
                if not (pid == "p01" and s == 0):
                    unverifiable = pid == "p03" and s == 1 and k == 0
                    labels.append({**base, "method": "mc", "soft_label": 0.9 if ok else 0.1,
                                   "hard_label": None if unverifiable else ok,
                                   "status": "unverifiable" if unverifiable else "labeled"})
                labels.append({**base, "method": "sympy", "hard_label": ok, "status": "labeled"})
                if p % 2 == 0:
                    labels.append({**base, "method": "consensus", "hard_label": ok, "status": "labeled"})
    wh.write("problems", problems, **kw)
    wh.write("solutions", solutions, **kw)
    wh.write("steps", steps, **kw)
    wh.write("step_labels", labels, **kw)
    return wh


@pytest.fixture
def labeled_wh(wh: Warehouse) -> Warehouse:
    return fill_warehouse(wh)
