"""Step-label quality vs cost: full MC, MC with early stop, and OmegaPRM on the same 8-step solutions.

Run: ``.venv/bin/python benchmarks/labeling.py`` (needs the warm-started policy ``models/arith-policy``;
this script never trains it). Generates 8-operation arithmetic problems of the policy's training
distribution (PolicyTrainConfig: style, operators, operand range), samples policy solutions, keeps
those with at least 8 steps (round-robin over problems, up to half of them correct), labels them with
each method through ONE shared rollout cache (costs count rollouts used, cached or not, so sharing saves
wall time without flattering any method), then audits against exact truth. The last stdout line is one
JSON object ``{"mc": {...}, "mc_early_stop": {...}, "omegaprm": {...}}`` with ``rollouts_per_step``,
``tokens_per_step`` and ``f1`` (ProcessBench F1) each; the line before it holds each method's F1 minus
MC's with a paired-bootstrap 95% interval, which says whether a gap is more than sampling noise.
Target: OmegaPRM at most 50% of full MC's rollouts with F1 no more than 0.05 below MC's.

``mc`` is the labeler's default (monotone hard labels). Two reference lines are printed besides:
``mc_per_prefix`` (Math-Shepherd's per-prefix hard rule on the same rollouts) and ``omegaprm_screened``
(the paper's question screening, which drops questions whose sampled solutions are all right or all
wrong and so leaves the wrong solutions of hard questions without a first error; the compared
``omegaprm`` runs with ``screen=False``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path

from tqdm import tqdm

from prm.datagen import SolutionToLabel, sample_solution_rows
from prm.generation import GenerationConfig, make_backend
from prm.label_audit import audit_labels, audit_markdown, predicted_first_errors
from prm.labeling import MCConfig, OmegaPRMConfig, backend_sampler, get_labeler
from prm.metrics import f1_difference_ci
from prm.models import ARITH_POLICY_NAME, prompter_for
from prm.policy import PolicyTrainConfig
from prm.tasks import ArithmeticConfig, generate_problems
from prm.tasks.sources import arithmetic_record

MIN_STEPS = 8  # the issue asks for solutions of at least 8 steps


def _args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default=ARITH_POLICY_NAME, help="policy name or folder (default: arith-policy)")
    p.add_argument("--problems", type=int, default=128, help="8-op problems to generate")
    p.add_argument("--samples", type=int, default=8, help="solutions sampled per problem")
    p.add_argument("--max-solutions", type=int, default=128, help="cap on solutions labeled (up to half correct)")
    p.add_argument("--max-tokens", type=int, default=320, help="generation budget per solution and rollout")
    p.add_argument("--min-steps", type=int, default=MIN_STEPS, help="keep solutions with at least this many steps")
    p.add_argument("--rollouts", type=int, default=8, help="MC's N and OmegaPRM's k (rollouts per estimate)")
    p.add_argument("--rollout-temperature", type=float, default=1.0,
                   help="sampling temperature of MC/OmegaPRM rollouts (solutions are sampled at 1.0)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dump", type=Path, help="write per-solution truth and labels of every method (JSON lines)")
    return p.parse_args()


def _spread(solutions: list[dict]) -> list[dict]:
    """Round-robin over problems: every problem's first solution, then every problem's second, ..."""
    by_problem: dict[str, list[dict]] = {}
    for s in solutions:
        by_problem.setdefault(s["problem_id"], []).append(s)
    rank = {id(s): i for group in by_problem.values() for i, s in enumerate(group)}
    return sorted(solutions, key=lambda s: rank[id(s)])  # stable: problem order kept within a round


def main() -> None:
    args = _args()
    policy = PolicyTrainConfig()  # generate what the default policy was trained on
    config = ArithmeticConfig(n_ops=MIN_STEPS, operators=policy.operators, max_value=policy.max_value,
                              style=policy.styles[0])
    problems = [arithmetic_record(p, config, args.seed, "bench").to_row()
                for p in generate_problems(args.problems, config, seed=args.seed)]
    prompter = prompter_for(args.model)
    started = time.perf_counter()
    with make_backend(GenerationConfig(model=args.model, seed=args.seed)) as backend:
        solutions, steps, stats = sample_solution_rows(
            backend, problems, prompter, model=args.model, n=args.samples,
            seed=args.seed, max_tokens=args.max_tokens)
        print(json.dumps({"sampled": asdict(stats) | {"accuracy": stats.accuracy}}))
        by_problem = {p["problem_id"]: p for p in problems}
        steps_of: dict[str, list[dict]] = {}
        for row in steps:
            steps_of.setdefault(row["solution_id"], []).append(row)
        eligible = [s for s in solutions if s["status"] == "ok" and s["n_steps"] >= args.min_steps
                    and s["first_error_truth"] is not None]
        # ProcessBench F1 needs both kinds: up to half correct solutions, the rest wrong ones, each taken
        # round-robin over problems so a few problems with many samples do not dominate the audit.
        right = _spread([s for s in eligible if s["first_error_truth"] < 0])[: args.max_solutions // 2]
        wrong = _spread([s for s in eligible if s["first_error_truth"] >= 0])
        chosen = right + wrong[: args.max_solutions - len(right)]
        to_label = [SolutionToLabel.from_rows(s, steps_of[s["solution_id"]],
                                              prompter_for(by_problem[s["problem_id"]]["question"]),
                                              by_problem[s["problem_id"]]["gold_answer"]) for s in chosen]
        ids = {s["solution_id"] for s in chosen}
        truth_steps = [r for r in steps if r["solution_id"] in ids]
        print(json.dumps({"labeled_solutions": len(chosen), "steps": len(truth_steps),
                          "wrong_solutions": sum(s["first_error_truth"] >= 0 for s in chosen)}))
        sampler = backend_sampler(backend, model=args.model, seed=args.seed, max_tokens=args.max_tokens,
                                  temperature=args.rollout_temperature)
        n = args.rollouts
        # The three the issue compares, then two reference lines: Math-Shepherd's per-prefix hard rule and
        # the paper's screened OmegaPRM.
        methods = [  # (key in the output, labeler registry name, config)
            ("mc", "mc", MCConfig(n_rollouts=n)),
            ("mc_early_stop", "mc_early_stop", MCConfig(n_rollouts=n, early_stop=True)),
            ("omegaprm", "omegaprm", OmegaPRMConfig(k=n, screen=False)),
            ("mc_per_prefix", "mc", MCConfig(n_rollouts=n, monotone=False)),
            ("omegaprm_screened", "omegaprm", OmegaPRMConfig(k=n)),
        ]
        truth = {s["solution_id"]: s["first_error_truth"] for s in chosen}
        audits, preds = {}, {}
        dump = {s.solution_id: {"steps": list(s.steps), "truth": truth[s.solution_id]} for s in to_label}
        for key, name, method_config in tqdm(methods, desc="labelers", file=sys.stderr):
            t0 = time.perf_counter()
            run = get_labeler(name, method_config).label(to_label, sampler)
            audits[key] = row = replace(audit_labels(name, run.labels, truth_steps, chosen,
                                                     cost_rollouts=run.cost_rollouts, cost_tokens=run.cost_tokens),
                                        method=key)
            preds[key] = predicted_first_errors(run.rows(), {s.solution_id: len(s.steps) for s in to_label})
            for lb in run.labels:
                dump[lb.solution_id].setdefault(key, {"first_error": preds[key][lb.solution_id], "mc": {}})
                dump[lb.solution_id][key]["mc"][lb.step_idx] = lb.soft_label
            print(json.dumps({**asdict(row), "sampler_calls": run.sampler_calls,
                              "fresh_rollouts": len(run.new_rollouts), "seconds": round(time.perf_counter() - t0, 1),
                              **run.extra}))
    if args.dump:
        args.dump.write_text("".join(json.dumps({"solution_id": k, **v}) + "\n" for k, v in dump.items()))
    print(audit_markdown(list(audits.values())), file=sys.stderr)
    # Same solutions for every method: a paired bootstrap says whether an F1 gap is more than sampling noise.
    gaps = {k: f1_difference_ci(preds[k], preds["mc"], truth) for k in ("mc_early_stop", "omegaprm")}
    print(json.dumps({"f1_minus_mc": gaps, "total_seconds": round(time.perf_counter() - started, 1)}))
    summary = {k: {"rollouts_per_step": a.rollouts_per_step, "tokens_per_step": a.tokens_per_step,
                   "f1": a.processbench_f1} for k, a in audits.items() if k in ("mc", "mc_early_stop", "omegaprm")}
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
