"""Throughput of the step verifiers through the worker pool, and the arithmetic verifier's accuracy.

Usage: ``.venv/bin/python benchmarks/verifier_speed.py [--n 20000]``. Prints progress lines, then one JSON
object as the last stdout line: ``{"sympy_checks_per_s": ..., "z3_checks_per_s": ...,
"false_alarm_rate": ..., "slip_recall": ...}``.
(``sympy_checks_per_s`` is the exact-rational arithmetic checker, named after the issue's "SymPy step
verifier".) Targets: >= 1,000 arithmetic checks/s on a 2-core machine; on the seeded calculator-line
sample of ``tests/verifiers/calculator_sample.py``, <= 0.2% of correct lines flagged and >= 90% of slips caught.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

# Run as a script, this folder heads sys.path: the project root goes first, for benchmarks.* and tests.*.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root: the sample lives in tests/

from prm.tasks.logic import corrupt_steps, generate_logic_problem
from tests.verifiers.calculator_sample import SampleScore, calculator_lines, score_sample
from verifiers import PoolConfig, VerifierPool


def arithmetic_steps(n: int, seed: int = 0) -> list[str]:
    """GSM8K-style steps, about one in five with a slip."""
    rng = random.Random(seed)
    steps = []
    for _ in range(n):
        a, b, c = rng.randint(2, 999), rng.randint(2, 99), rng.randint(1, 999)
        result = a * b + c + (rng.randint(1, 9) if rng.random() < 0.2 else 0)
        style = rng.randrange(3)
        if style == 0:
            steps.append(f"She earns {a} * {b} + {c} = $<<{a}*{b}+{c}={result}>>{result} in total.")
        elif style == 1:
            steps.append(f"{a}*{b}+{c} = {a * b}+{c} = {result}")
        else:
            steps.append(rf"$\frac{{{a * b}}}{{{b}}} + {c} = {result - a * b + a}$")
    return steps


def logic_steps(n: int, seed: int = 0) -> list[str]:
    steps: list[str] = []
    k = seed
    while len(steps) < n:
        problem = generate_logic_problem(k)
        steps += list(problem.gold_steps) + corrupt_steps(problem, k)[0]
        k += 1
    return steps[:n]


def throughput(pool: VerifierPool, kind: str, items: list[str]) -> tuple[float, dict[str, int]]:
    pool.run(kind, items[:64])  # warm: workers started and task modules imported
    start = time.perf_counter()
    verdicts = pool.run(kind, items)
    elapsed = time.perf_counter() - start
    counts: dict[str, int] = {}
    for v in verdicts:
        counts[v.status] = counts.get(v.status, 0) + 1
    return len(items) / elapsed, counts


def accuracy(pool: VerifierPool, n_correct: int, n_slips: int, seed: int) -> SampleScore:
    """False alarms and caught slips of the arithmetic verifier on the seeded calculator-line sample."""
    lines = calculator_lines(n_correct, n_slips, seed)
    return score_sample(lines, pool.run("arithmetic", [line.text for line in lines]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20_000, help="steps per verifier (default 20000)")
    parser.add_argument("--workers", type=int, default=2, help="pool workers (default 2: this machine)")
    parser.add_argument("--sample", type=int, default=1_500, help="correct calculator lines (default 1500)")
    parser.add_argument("--slips", type=int, default=300, help="slipped calculator lines (default 300)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the calculator-line sample (default 0)")
    args = parser.parse_args()
    with VerifierPool(PoolConfig(workers=args.workers)) as pool:
        score = accuracy(pool, args.sample, args.slips, args.seed)
        print(json.dumps({"verifier": "arithmetic", "correct_lines": score.n_correct, "slips": score.n_slips,
                          "false_alarms": score.false_alarms, "slips_caught": score.slips_caught,
                          "correct_unverifiable": score.correct_unverifiable,
                          "missed_examples": list(score.missed[:3])}))
        sympy_rate, sympy_counts = throughput(pool, "arithmetic", arithmetic_steps(args.n))
        print(json.dumps({"verifier": "arithmetic", "steps": args.n, "verdicts": sympy_counts}))
        z3_rate, z3_counts = throughput(pool, "logic", logic_steps(args.n))
        print(json.dumps({"verifier": "z3", "steps": args.n, "verdicts": z3_counts}))
    print(json.dumps({"sympy_checks_per_s": round(sympy_rate, 1), "z3_checks_per_s": round(z3_rate, 1),
                      "false_alarm_rate": round(score.false_alarm_rate, 5),
                      "slip_recall": round(score.slip_recall, 4)}))


if __name__ == "__main__":
    main()
