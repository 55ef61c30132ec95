"""What it takes for a PRM to read steps: learning curves of the truth-trained PRM against training data and
optimizer steps, beside the policy's log-likelihood (a baseline that reads steps with no training).

Run: ``.venv/bin/python benchmarks/prm_curves.py --workdir /tmp/curves`` (``--quick`` for a smoke run).
Samples solutions of 4-8-step word problems from the shipped policy with vLLM (train, validation and an
in-distribution test set from three disjoint problem seeds; exact step truth, no rollouts), then trains one PRM
per point and evaluates each on the same test set: ProcessBench F1 (threshold chosen on validation) with its 95%
interval over test problems, step AUC, step sensitivity on sibling steps, and best-of-N (aggregation chosen on
validation) with its gain over majority vote; beside them the reading baselines (the policy's log-likelihood,
an implicit PRM trained on the train solutions' outcomes) and the implicit PRM trained on their step truth, each
over `--implicit-seeds` (every seed's row, then their mean).
Prints one JSON line per point; the last line is one object with ``points`` and ``baselines``; ``--plot``
writes the curves as a PNG.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

from prm.best_of_n import MAJORITY, ORACLE, bon_accuracies, bon_correct, bon_intervals, evaluate_best_of_n
from prm.datagen import sample_solution_rows
from prm.experiments import (
    IMPLICIT_PRM,
    POLICY_LOGLIK,
    STEP_IMPLICIT_PRM,
    implicit_prm_runs,
    policy_loglik_runs,
)
from prm.first_error import ScoredSolution, evaluate_processbench, f1_ci, step_auc
from prm.format import labels_from_first_error
from prm.generation import SOLUTION_MAX_TOKENS, GenerationConfig, make_backend
from prm.metrics import score_pairs, sibling_pairs, step_sensitivity
from prm.models import ARITH_POLICY_NAME, model_version, prompter_for
from prm.scoring import load_prm
from prm.tasks import ArithmeticSourceConfig, generate_arithmetic
from prm.training import ImplicitPRMConfig, PRMTrainConfig, train_prm

SPLIT_SEEDS = {"train": 1, "val": 2, "test": 3}  # problem and sampling seeds: disjoint problems per split
BON_N = 8


def _args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workdir", required=True, help="samples (JSONL) and one PRM folder per point stay here")
    p.add_argument("--per-level", type=int, nargs=3, default=[300, 60, 80], help="problems per level: train val test")
    p.add_argument("--samples", type=int, default=8, help="solutions per problem")
    p.add_argument("--points", nargs="+", default=["3000:1000", "3000:3000", "12000:1000", "12000:3000"],
                   help="the curve's points, each <train solutions>:<optimizer steps>")
    p.add_argument("--seed", type=int, default=0, help="PRM seed (init and data order)")
    p.add_argument("--implicit-seeds", type=int, nargs="+", default=[0, 1, 2],
                   help="seeds of each implicit PRM; its row pools them (mean, and every seed's figures)")
    p.add_argument("--threads", type=int, default=2, help="torch threads of each training run (run alone)")
    p.add_argument("--implicit-steps", type=int, default=400,
                   help="optimizer steps of each implicit PRM, on outcomes and on step truth (0: none)")
    p.add_argument("--plot", default=None, help="write the curves here (PNG)")
    p.add_argument("--quick", action="store_true", help="a smoke run: 6/4/4 problems per level, 2 points")
    args = p.parse_args()
    if args.quick:
        args.per_level, args.points, args.implicit_steps = [6, 4, 4], ["60:10", "120:20"], 10
        args.implicit_seeds = [0, 1]
    return args


def _emit(obj: dict) -> None:
    print(json.dumps(obj), flush=True)


def sample(workdir: Path, args: argparse.Namespace) -> dict[str, list[dict]]:
    """Per split, solutions with exact truth (cached as JSONL under ``workdir``)."""
    out = {}
    for (split, seed), per_level in zip(SPLIT_SEEDS.items(), args.per_level, strict=True):
        path = workdir / f"{split}.jsonl"
        if not path.exists():
            problems = [r.to_row() for r in generate_arithmetic(
                ArithmeticSourceConfig(n_ops=(4, 5, 6, 7, 8), per_level=per_level), seed=seed)]
            questions = {p["problem_id"]: p["question"] for p in problems}
            with make_backend(GenerationConfig(model=ARITH_POLICY_NAME, seed=seed)) as backend:
                sols, steps, _ = sample_solution_rows(
                    backend, problems, prompter_for(ARITH_POLICY_NAME), model=model_version(ARITH_POLICY_NAME),
                    n=args.samples, seed=seed, max_tokens=SOLUTION_MAX_TOKENS)
            by_solution: dict[str, list[tuple[int, str]]] = {}
            for s in steps:
                by_solution.setdefault(s["solution_id"], []).append((s["step_idx"], s["text"]))
            rows = [{"solution_id": s["solution_id"], "problem_id": s["problem_id"],
                     "question": questions[s["problem_id"]],
                     "steps": [t for _, t in sorted(by_solution[s["solution_id"]])],
                     "first_error": s["first_error_truth"], "final_answer": s["final_answer"],
                     "is_correct": bool(s["is_correct"])}
                    for s in sols if s["status"] == "ok" and s["n_steps"] and s["first_error_truth"] is not None]
            path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        out[split] = [json.loads(line) for line in path.read_text().splitlines()]
        _emit({"split": split, "solutions": len(out[split])})
    return out


def _trl(rows: list[dict], split: str) -> list[dict]:
    return [{"prompt": r["question"], "completions": r["steps"], "split": split,
             "labels": labels_from_first_error(len(r["steps"]), r["first_error"])} for r in rows]


def _scored(rows: list[dict], scores: list[list[float]]) -> list[ScoredSolution]:
    return [ScoredSolution(r["solution_id"], r["problem_id"], tuple(min(1.0, max(0.0, x)) for x in s),
                           r["first_error"], r["final_answer"], r["is_correct"])
            for r, s in zip(rows, scores, strict=True)]


def evaluate(score: Callable, data: dict[str, list[dict]]) -> dict:
    """A batch scorer's figures on the test set (threshold and aggregation chosen on validation)."""
    val = _scored(data["val"], score([(r["question"], r["steps"]) for r in data["val"]]))
    test = _scored(data["test"], score([(r["question"], r["steps"]) for r in data["test"]]))
    pairs = sibling_pairs(data["test"])
    right, wrong = score_pairs(score, {r["problem_id"]: r["question"] for r in data["test"]}, pairs)
    return evaluate_run(test, evaluate_processbench(val, test).threshold, evaluate_best_of_n(val, test, BON_N).chosen,
                        (pairs, right, wrong))


def plot(points: list[dict], baselines: list[dict], path: str) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from prm.reports import save_png

    fig = Figure(figsize=(10, 4))
    FigureCanvasAgg(fig)
    for i, (x, other) in enumerate((("solutions", "steps"), ("steps", "solutions"))):
        ax = fig.add_subplot(1, 2, i + 1)
        for fixed in sorted({p[other] for p in points}):
            line = sorted((p for p in points if p[other] == fixed), key=lambda p: p[x])
            if len(line) < 2:
                continue
            for metric, style in (("prm_f1", "-o"), ("step_auc", "--s"), ("step_sensitivity", ":^")):
                ax.plot([p[x] for p in line], [p[metric] for p in line], style, label=f"{metric} ({other}={fixed})")
        for baseline, style in zip(baselines, ("-", "-.", "--"), strict=False):
            for metric, color in (("prm_f1", "C0"), ("step_sensitivity", "C2")):
                ax.axhline(baseline[metric], color=color, ls=style, alpha=0.5, lw=1,
                           label=f"{baseline['method'].removeprefix('baseline:')} {metric}")
        ax.set_xscale("log")
        ax.set_xlabel(f"train {x}")
        ax.set_ylim(0, 1)
        ax.legend(fontsize="xx-small")
    fig.suptitle("Truth-trained PRM: in-distribution test (4-8 steps)")
    fig.tight_layout()
    save_png(fig, path)


def main() -> None:
    args = _args()
    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    data = sample(workdir, args)
    runs = policy_loglik_runs(ARITH_POLICY_NAME, data["val"], {"test": data["test"]}, BON_N)
    baseline = {"method": POLICY_LOGLIK, **evaluate_run(*runs["test"][0])}
    _emit(baseline)
    baselines = [baseline]
    if args.implicit_steps:
        for labels, beta, name in (("outcome", 0.05, IMPLICIT_PRM), ("step", 0.5, STEP_IMPLICIT_PRM)):
            started = time.perf_counter()
            config = ImplicitPRMConfig(labels=labels, beta=beta, max_steps=args.implicit_steps,
                                       torch_threads=args.threads)
            runs = implicit_prm_runs(data["train"], data["val"], {"test": data["test"]}, BON_N, workdir,
                                     args.implicit_seeds, config,
                                     progress=lambda m: print(m, file=sys.stderr, flush=True))
            per_seed = [{"seed": seed, **evaluate_run(*run)} for seed, run in zip(args.implicit_seeds, runs["test"],
                                                                                 strict=True)]
            for row in per_seed:
                _emit({"method": name, **row})
            baselines.append({"method": name, "labels": labels, "beta": beta, "steps": args.implicit_steps,
                              "train_s_per_seed": round((time.perf_counter() - started) / len(per_seed), 1),
                              **seed_mean(per_seed), "per_seed": per_seed})
            _emit(baselines[-1])
    points = []
    train = list(data["train"])
    random.Random(args.seed).shuffle(train)
    for spec in args.points:
        n, steps = (int(x) for x in spec.split(":"))
        out = workdir / f"truth-n{n}-s{steps}-seed{args.seed}"
        started = time.perf_counter()
        if not (out / "prm_card.json").exists():
            train_prm(_trl(train[:n], "train") + _trl(data["val"], "val"), out,
                      PRMTrainConfig(max_steps=steps, seed=args.seed, torch_threads=args.threads,
                                     eval_steps=max(steps // 4, 1), save_steps=10 * steps))
        point = {"method": "truth", "solutions": min(n, len(train)), "steps": steps,
                 "train_s": round(time.perf_counter() - started, 1), **evaluate(load_prm(out).score_batch, data)}
        points.append(point)
        _emit(point)
    if args.plot:
        plot(points, baselines, args.plot)
    _emit({"points": points, "baselines": baselines})


def evaluate_run(test: list[ScoredSolution], threshold: float, how: str, siblings: tuple) -> dict:
    """The figures of one scorer's run on the test set: F1 at ``threshold``, best-of-``BON_N`` by ``how``, and
    the step sensitivity of its (pairs, right scores, wrong scores), each with its 95% interval over problems."""
    sens = step_sensitivity(*siblings)
    bon = bon_intervals(test, BON_N, how)
    return {"prm_f1": evaluate_processbench([], test, threshold=threshold).f1, "prm_f1_ci": f1_ci(test, threshold),
            "step_auc": step_auc(test)[0], "step_sensitivity": sens.value, "step_sensitivity_ci": sens.ci,
            "sibling_pairs": sens.n_pairs, "bon_acc": bon_correct_mean(test, how), "bon_acc_ci": bon["ci"],
            "bon_gain": bon["gain"], "bon_gain_ci": bon["gain_ci"], "majority_acc": bon_correct_mean(test, MAJORITY),
            "oracle_acc": bon_accuracies(test, BON_N)[0][ORACLE]}


def seed_mean(rows: list[dict]) -> dict:
    """The mean over seeds of every scalar figure, with each figure's range over seeds (``*_seed_range``)."""
    keys = [k for k, v in rows[0].items() if isinstance(v, float)]
    return {**{k: sum(r[k] for r in rows) / len(rows) for k in keys},
            **{f"{k}_seed_range": [min(r[k] for r in rows), max(r[k] for r in rows)] for k in keys}}


def bon_correct_mean(test: list[ScoredSolution], how: str) -> float:
    picks = bon_correct(test, BON_N, how)
    return sum(picks.values()) / len(picks)


if __name__ == "__main__":
    main()
