"""Which label source trains the best PRM per rollout paid: the label-source comparison at benchmark size.

Run: ``.venv/bin/python benchmarks/prm_quality.py`` (uses the shipped default policy; trains nothing but PRMs).
Generates word problems of 4-8 steps (the shipped policy gets ~90% of 4-step and ~27% of 8-step ones right, so
every level holds both right and wrong solutions; at 9-10 steps it is almost never right, which leaves best-of-N
nothing to pick), samples 8 solutions each with vLLM, labels them through the partition functions the
Dagster assets call (MC and OmegaPRM over one rollout cache, progress from MC's rollouts, SymPy, the
``formal_override`` consensus), then trains one PRM per label source on the same problems, once per
``--seeds`` seed, and evaluates all on the same held-out solutions with exact truth, on two test sets:
``in_distribution`` (held-out problems of <= ``--train-max-steps`` steps, the training lengths) and
``easy_to_hard`` (longer problems). Beside them: the constant and length baselines and two baselines that read
steps without step labels (the policy's log-likelihood of each step; an implicit PRM, PRIME, fine-tuned on the
train split's outcomes per seed). Every figure is the mean over seeds with a 95% interval over test problems
(all seeds' verdicts on a problem resampled together); thresholds and best-of-N aggregations are chosen on
validation. It also times PRM training and scoring (batched vs one at a time).

Each stage prints a JSON line; the last line is one object with ``train_tokens_per_s``,
``score_steps_per_s_batched``, ``score_steps_per_s_single`` and ``comparison``: rows with ``method``, ``test``,
``label_f1``, ``rollouts_per_step``, ``prm_f1``, ``prm_f1_ci``, ``step_sensitivity``, ``step_sensitivity_ci``,
``bon_acc``, ``bon_acc_ci``, ``bon_gain`` (over majority vote), ``bon_gain_ci``, ``majority_acc``, ``oracle_acc``,
``seeds``, and for every scorer but truth its paired difference from the truth-trained PRM on the same problems
(``prm_f1_vs_truth``, ``step_sensitivity_vs_truth``, ``bon_acc_vs_truth``, each with ``_ci``: an interval that
holds 0 is no difference), and the off-policy perturbation suite (:mod:`prm.evaluation.perturbations`):
``perturbation`` (wrong kind -> ``{"detection", "detection_ci", "below_threshold"}``, reformatted-right kinds under
``reformatted``), ``right_at_or_above_threshold`` with ``_ci``, and ``worst_detection``. Scoring speed is
measured on the first 2,000 held-out solutions. PRM folders stay
under ``--workdir``/prms/seed<k>/<method>.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from prm.datagen import sample_solution_rows
from prm.evaluation import heldout_solutions, split_test_sets
from prm.experiments import (
    IMPLICIT_PRM,
    POLICY_LOGLIK,
    VERSUS_TRUTH,
    ComparisonConfig,
    bon_curves,
    compare_label_sources,
    comparison_markdown,
    comparison_table,
    implicit_prm_runs,
    policy_loglik_runs,
    pooled_comparison,
)
from prm.generation import SOLUTION_MAX_TOKENS, GenerationConfig, make_backend
from prm.labeling import (
    ConsensusConfig,
    MCConfig,
    OmegaPRMConfig,
    ProgressConfig,
    consensus_partition,
    label_partition,
    label_progress_partition,
    verify_partition,
)
from prm.models import ARITH_POLICY_NAME, model_version, prompter_for
from prm.reports import plot_best_of_n_by_scorer
from prm.scoring import load_prm
from prm.tasks import ArithmeticSourceConfig, generate_arithmetic
from prm.training import ImplicitPRMConfig, PRMTrainConfig, TrainingSetConfig, read_prm_card, stratified_splits
from warehouse import Warehouse, connect
from warehouse.methods import COMPARED_METHODS, JUDGE, LABEL_SOURCES, TRUTH

SOURCE, DAY = "bench", "2026-01-01"
SPEED_SOLUTIONS = 2000  # held-out solutions the scoring speed is measured on (both ways, the same ones)


def add_workload_args(p: argparse.ArgumentParser, per_level: int, per_level_help: str) -> None:
    """The workload's flags (problems, samples, rollouts, split, PRM steps), shared with ``benchmarks/active.py``."""
    p.add_argument("--levels", type=int, nargs="+", default=[4, 5, 6, 7, 8], help="gold steps per problem")
    p.add_argument("--per-level", type=int, default=per_level, help=per_level_help)
    p.add_argument("--samples", type=int, default=8, help="solutions per problem (best-of-N uses them all)")
    p.add_argument("--rollouts", type=int, default=8, help="MC rollouts per prefix and OmegaPRM's k")
    p.add_argument("--temperature", type=float, default=1.0, help="sampling temperature of solutions and rollouts")
    p.add_argument("--train-max-steps", type=int, default=6, help="easy-to-hard: longer problems are a test set")
    p.add_argument("--prm-steps", type=int, default=None, help="optimizer steps per PRM (default: PRMTrainConfig's)")
    p.add_argument("--val-share", type=float, default=0.2, help="short problems held out for thresholds")
    p.add_argument("--test-share", type=float, default=0.2, help="short problems held out: the in-distribution test")
    p.add_argument("--seed", type=int, default=0, help="seeds the problems, the samples and the split")


def _args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_workload_args(p, 800, "problems per level (800: every goal of the PRM evaluation met; 300 runs in half "
                      "the time and misses two; the goals: "
                      "docs/concepts/prm.md, 'Evaluation: does the PRM read the steps?')")
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="one PRM per label source per seed")
    p.add_argument("--implicit-steps", type=int, default=400, help="optimizer steps of each implicit PRM (0: none)")
    # No judge here: benchmarks/judge.py measures it; its consensus here is the rollouts' with the SymPy check.
    p.add_argument("--methods", nargs="+", default=[*(m for m in COMPARED_METHODS if m != JUDGE), "sympy"],
                   choices=LABEL_SOURCES, help="label sources compared (one PRM each)")
    p.add_argument("--workdir", default=None, help="keep the warehouse and PRMs here; a warehouse already holding "
                   "the benchmark's labels is reused, so PRM settings can be compared without labeling again")
    p.add_argument("--plot-dir", default=None, help="write the best-of-N curves of the first seed's PRMs here (PNG)")
    p.add_argument("--quick", action="store_true", help="a smoke run: 3 levels, 6 problems each, 60 PRM steps")
    args = p.parse_args()
    if args.quick:
        args.levels, args.per_level, args.samples, args.rollouts, args.prm_steps = [4, 6, 8], 6, 4, 4, 60
        args.val_share, args.test_share, args.seeds, args.implicit_steps = 0.4, 0.3, [0, 1], 20
    return args


def _emit(obj: dict) -> None:
    print(json.dumps(obj), flush=True)


def build_labels(wh: Warehouse, args: argparse.Namespace) -> None:
    """Problems, solutions and every label method in the warehouse, as the Dagster assets would write them."""
    problems = [r.to_row() for r in generate_arithmetic(
        ArithmeticSourceConfig(n_ops=tuple(args.levels), per_level=args.per_level), seed=args.seed)]
    kw = {"source": SOURCE, "day": DAY, "run_id": "bench"}
    wh.write("problems", problems, **kw)
    started = time.perf_counter()
    with make_backend(GenerationConfig(model=ARITH_POLICY_NAME, seed=args.seed)) as backend:
        policy = model_version(ARITH_POLICY_NAME)
        prompter = prompter_for(ARITH_POLICY_NAME)
        sols, steps, stats = sample_solution_rows(backend, problems, prompter, model=policy, n=args.samples,
                                                  seed=args.seed, max_tokens=SOLUTION_MAX_TOKENS,
                                                  temperature=args.temperature)
        wh.write("solutions", sols, writer="solutions", **kw)
        wh.write("steps", steps, writer="solutions", **kw)
        ok = [s for s in sols if s["status"] == "ok"]
        wrong = sum(s["first_error_truth"] is not None and s["first_error_truth"] >= 0 for s in ok)
        _emit({"solutions": len(sols), "accuracy": round(stats.accuracy, 3),
               "share_with_a_wrong_step": round(wrong / max(len(ok), 1), 3),
               "seconds": round(time.perf_counter() - started, 1)})
        common = {"model": policy, "source": SOURCE, "day": DAY, "run_id": "bench", "prompt": prompter,
                  "max_tokens": SOLUTION_MAX_TOKENS, "progress": lambda m: None}
        for method, config in (("mc", MCConfig(n_rollouts=args.rollouts)),
                               ("omegaprm", OmegaPRMConfig(k=args.rollouts, screen=False))):
            started = time.perf_counter()
            report = label_partition(wh, method, config, lambda: backend, seed=args.seed, **common)
            _emit({"labeled": method, "rollouts": report.cost_rollouts, "new_rollouts": report.new_rollouts,
                   "seconds": round(time.perf_counter() - started, 1)})
    label_progress_partition(wh, ProgressConfig(), source=SOURCE, day=DAY, run_id="bench")
    verify_partition(wh, source=SOURCE, day=DAY, run_id="bench")
    consensus_partition(wh, ConsensusConfig(policy="formal_override"), source=SOURCE, day=DAY, run_id="bench")


def scoring_speed(model_dir: Path, solutions: list[dict]) -> dict:
    """Steps scored per second, batched and one solution at a time, on the same solutions."""
    scorer = load_prm(model_dir)
    items = [(s["question"], s["steps"]) for s in solutions]
    n_steps = sum(len(steps) for _, steps in items)
    started = time.perf_counter()
    for question, steps in items:
        scorer.score_steps(question, steps)
    single = time.perf_counter() - started
    started = time.perf_counter()
    scorer.score_batch(items)
    batched = time.perf_counter() - started
    return {"score_steps_per_s_single": n_steps / single, "score_steps_per_s_batched": n_steps / batched,
            "scored_steps": n_steps}


def reading_baselines(con: Any, data: TrainingSetConfig, heldout: dict, sets: dict, bon_n: int, scratch: Path,
                      args: argparse.Namespace) -> dict[str, dict[str, list]]:
    """The policy log-likelihood and implicit-PRM baselines' runs per test set."""
    extra = {POLICY_LOGLIK: policy_loglik_runs(ARITH_POLICY_NAME, heldout["val"], sets, bon_n)}
    if args.implicit_steps:
        train = heldout_solutions(con, stratified_splits(con, data), splits=("train",), source=SOURCE)["train"]
        extra[IMPLICIT_PRM] = implicit_prm_runs(
            train, heldout["val"], sets, bon_n, scratch / "prms", args.seeds,
            ImplicitPRMConfig(max_steps=args.implicit_steps), progress=lambda m: print(m, file=sys.stderr, flush=True))
    return extra


def main() -> None:
    args = _args()
    with tempfile.TemporaryDirectory(prefix="prm-bench-") as tmp:
        scratch = Path(args.workdir or tmp)
        wh = Warehouse(scratch / "warehouse")
        if wh.files("step_labels"):
            _emit({"reused_labels": str(wh.root)})
        else:
            build_labels(wh, args)
        data = TrainingSetConfig(method=TRUTH, train_max_steps=args.train_max_steps, val_share=args.val_share,
                                 test_share=args.test_share, source=SOURCE, split_seed=args.seed)
        steps = {} if args.prm_steps is None else {"max_steps": args.prm_steps}
        started = time.perf_counter()
        by_seed = {}
        for seed in args.seeds:
            config = ComparisonConfig(methods=tuple(args.methods), data=data,
                                      train=PRMTrainConfig(**steps, eval_steps=10_000, save_steps=10_000, seed=seed))
            by_seed[seed] = compare_label_sources(wh.root, scratch / "prms" / f"seed{seed}", config,
                                                  progress=lambda m: print(m, file=sys.stderr, flush=True))
            for row in comparison_table(by_seed[seed]):
                _emit({"seed": seed, "comparison_row": row})
        _emit({"comparison_seconds": round(time.perf_counter() - started, 1)})
        con = connect(wh.root)
        heldout = heldout_solutions(con, stratified_splits(con, data), source=SOURCE)
        sets = split_test_sets(heldout["test"], args.train_max_steps)
        first = by_seed[args.seeds[0]]
        bon_n = next(r.summary["bon_n"] for r in first if "bon_n" in r.summary)
        extra = reading_baselines(con, data, heldout, sets, bon_n, scratch, args)
        table = pooled_comparison(by_seed, sets, extra)
        for row in table:
            if row.get("seeds", 0) > 1:  # the trained scorers: which seeds (deterministic baselines keep 1)
                row["seeds"] = list(args.seeds)
        print(comparison_markdown(table), file=sys.stderr)
        if args.plot_dir:
            for test in sets:
                curves = {m: c for m, c in bon_curves(first, args.train_max_steps, test).items()
                          if m in ("truth", "mc", "omegaprm")}
                if curves:
                    path = Path(args.plot_dir) / f"prm_best_of_n_{test}.png"
                    plot_best_of_n_by_scorer(curves, path, title=f"Best-of-N, {test} test (seed {args.seeds[0]})")
                    _emit({"plot": str(path)})
        trained = [r for r in first if r.model_dir is not None]
        card = read_prm_card(trained[0].model_dir)
        speed = scoring_speed(trained[0].model_dir, heldout["test"][:SPEED_SOLUTIONS])
        keys = ("method", "test", "label_f1", "rollouts_per_step", "prm_f1", "prm_f1_ci", "step_sensitivity",
                "step_sensitivity_ci", "bon_acc", "bon_acc_ci", "bon_gain", "bon_gain_ci", "majority_acc",
                "oracle_acc", *(k for key in VERSUS_TRUTH for k in (key, f"{key}_ci")), "perturbation",
                "right_at_or_above_threshold", "right_at_or_above_threshold_ci", "worst_detection", "seeds", "skipped")
        _emit({"train_tokens_per_s": card["final_metrics"]["train_tokens_per_s"], **speed,
               "batched_speedup": speed["score_steps_per_s_batched"] / speed["score_steps_per_s_single"],
               "bon_n": bon_n, "comparison": [{k: row.get(k) for k in keys if k in row or k != "skipped"}
                                              for row in table]})


if __name__ == "__main__":
    main()
