"""The scoring benchmarks' shared workload: arithmetic word problems with gold or one-step-corrupted solutions,
and a PRM of the shipped policy's size made in seconds (its scores mean nothing; its cost is the real one).

Imported by ``benchmarks/scoring.py``, ``benchmarks/reward_server.py`` and ``benchmarks/gpu.py`` as
``benchmarks.workload`` (each puts the project root on ``sys.path``).
"""

from __future__ import annotations

import random
from pathlib import Path

from prm.format import labels_from_first_error, split_steps
from prm.tasks import ArithmeticSourceConfig, generate_arithmetic


def problems(n: int, seed: int) -> list[tuple[str, str, str, int]]:
    """(question, solution, gold, first wrong step or -1): about ``n / 2`` word problems of 2-8 steps (callers
    cycle through them); every other solution has one wrong step."""
    records = generate_arithmetic(ArithmeticSourceConfig(n_ops=(2, 4, 6, 8), per_level=max(1, n // 8)), seed=seed)
    rng = random.Random(seed)
    out = []
    for i, r in enumerate(records):
        solution, first_error = r.gold_solution, -1
        if i % 2:
            steps = split_steps(solution)
            k = rng.randrange(len(steps))
            lhs, rhs = steps[k].rsplit("= ", 1)
            steps[k] = f"{lhs}= {int(rhs) + 1}"
            first_error = k
            solution = "\n".join(steps) + f"\nAnswer: {r.gold_answer}"
        out.append((r.question, solution, r.gold_answer, first_error))
    return out


def default_prm(out: Path, seed: int, base_model: str = "arith-policy", max_steps: int = 1) -> Path:
    """A PRM trained for ``max_steps`` steps from ``base_model``: a real folder of the backbone's size."""
    from prm.training import PRMTrainConfig, train_prm

    rows = []
    for question, solution, _, first_error in problems(64, seed + 1):
        steps = split_steps(solution)
        rows.append({"prompt": question, "completions": steps,
                     "labels": labels_from_first_error(len(steps), first_error)})
    # The classification head: the layout vLLM's pooling runner serves, which these benchmarks compare.
    return train_prm(rows, out, PRMTrainConfig(base_model=base_model, head="classifier", max_steps=max_steps,
                                               eval_steps=1000, save_steps=1000, seed=seed))
