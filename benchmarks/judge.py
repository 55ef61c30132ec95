"""The LLM judge on held-out problems with exact truth, through the judge labeler's own path (vLLM, k votes, majority).

Run: ``.venv/bin/python benchmarks/judge.py [--model smollm2-judge] [--k 3 --temperature 0.7]`` (``--model
smollm2-135m-instruct`` for the zero-shot base). The solutions are the fine-tuning recipe's held-out set
(``prm.judge_training``: the policy's samples of problems never trained on, balanced by first-error position),
judged with the ``judgments`` asset's settings. ``consensus_f1`` is the ProcessBench F1 of the consensus of the
judge and the SymPy check (``prm.labeling.consensus``, policy ``formal_override``) on the same solutions.

Prints progress, then one JSON object: ``coverage``, ``first_error_acc``, ``processbench_f1``,
``tokens_per_step``, ``consensus_f1``, each with a 95% bootstrap interval over problems (``*_ci``), plus counts.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from prm.datagen import SolutionToLabel
from prm.generation import GenerationConfig, make_backend
from prm.judge_training import JudgeExample, JudgeTrainConfig, judge_examples
from prm.labeling.consensus import ConsensusConfig, apply_policy, collect_verdicts
from prm.labeling.formal import verify_steps
from prm.labeling.judge import JudgeConfig, judge_solutions
from prm.metrics import first_error_accuracies, harmonic_mean
from prm.models import JUDGE_NAME


def _args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default=JUDGE_NAME, help="judge model name or folder")
    # The judgments asset's defaults (assets/verification.py): the fine-tuned judge's greedy verdict.
    p.add_argument("--k", type=int, default=1, help="votes per solution")
    p.add_argument("--temperature", type=float, default=0.0)
    p.add_argument("--max-tokens", type=int, default=JudgeConfig().max_tokens)
    p.add_argument("--seed", type=int, default=0, help="the recipe's data seed (the held-out set)")
    return p.parse_args()


def scores(rows: Sequence[JudgeExample], judged: Sequence[int | None], consensus: Sequence[int | None],
           tokens: Sequence[int], picked: Sequence[int]) -> dict[str, float | None]:
    """The five numbers over the solutions ``picked`` (positions into the aligned sequences; repeats allowed)."""
    truth = {str(j): rows[i].first_error for j, i in enumerate(picked)}
    judge = {str(j): judged[i] for j, i in enumerate(picked)}
    return {"coverage": sum(v is not None for v in judge.values()) / len(picked),
            "first_error_acc": first_error_accuracies(judge, truth)[0],
            "processbench_f1": harmonic_mean(*first_error_accuracies(judge, truth)),
            "tokens_per_step": sum(tokens[i] for i in picked) / sum(rows[i].n_steps for i in picked),
            "consensus_f1": harmonic_mean(*first_error_accuracies(
                {str(j): consensus[i] for j, i in enumerate(picked)}, truth))}


def bootstrap(rows: Sequence[JudgeExample], statistic: Callable[[Sequence[int]], dict[str, float | None]],
              n_boot: int = 1000, seed: int = 0) -> dict[str, tuple[float, float] | None]:
    """95% percentile intervals of every statistic, resampling problems (a problem's solutions stay together)."""
    by_problem: dict[str, list[int]] = defaultdict(list)
    for i, r in enumerate(rows):
        by_problem[r.problem_id].append(i)
    groups, rng = list(by_problem.values()), random.Random(seed)
    draws: dict[str, list[float]] = defaultdict(list)
    for _ in range(n_boot):
        picked = [i for _ in groups for i in groups[rng.randrange(len(groups))]]
        for key, value in statistic(picked).items():
            if value is not None:
                draws[key].append(value)
    return {key: (sorted(v)[int(0.025 * len(v))], sorted(v)[min(len(v) - 1, int(0.975 * len(v)))]) if v else None
            for key, v in draws.items()}


def main() -> None:
    args = _args()
    started = time.perf_counter()
    rows = judge_examples(JudgeTrainConfig(seed=args.seed), "eval")
    print(f"{len(rows)} held-out solutions of {len({r.problem_id for r in rows})} problems", file=sys.stderr)
    solutions = [SolutionToLabel.of_steps(str(i), r.problem_id, "", r.steps, "") for i, r in enumerate(rows)]
    config = JudgeConfig(k=args.k, temperature=args.temperature, max_tokens=args.max_tokens, model=args.model)
    with make_backend(GenerationConfig(model=args.model, seed=args.seed)) as backend:
        run = judge_solutions(solutions, backend, config, questions={r.problem_id: r.question for r in rows})
    by_id = {j.solution_id: j for j in run.judgments}
    judged = [by_id[str(i)].first_error if str(i) in by_id else None for i in range(len(rows))]
    tokens = [by_id[str(i)].cost_tokens if str(i) in by_id else 0 for i in range(len(rows))]
    steps = [{"solution_id": str(i), "problem_id": r.problem_id, "step_idx": k, "text": t}
             for i, r in enumerate(rows) for k, t in enumerate(r.steps)]
    formal = verify_steps(steps, {r.problem_id: "arith_word" for r in rows})
    verdicts = collect_verdicts(steps, list(formal.labels), [j.to_row() for j in run.judgments], formal.verifications)
    kept = {lb.solution_id: lb.first_error
            for lb in apply_policy(verdicts, ConsensusConfig(policy="formal_override")).labels}
    consensus = [kept.get(str(i)) for i in range(len(rows))]  # a solution the policy drops counts as a miss

    def statistic(picked: Sequence[int]) -> dict[str, float | None]:
        return scores(rows, judged, consensus, tokens, picked)

    point = statistic(list(range(len(rows))))
    cis = bootstrap(rows, statistic)
    out: dict[str, Any] = {"model": args.model, "k": args.k, "solutions": len(rows), **point,
                           **{f"{k}_ci": v for k, v in cis.items()}, "abstentions": run.n_abstain,
                           "wall_s": round(time.perf_counter() - started, 1)}
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
