"""Which LM-head PRM recipe holds against steps its policy would never write: an ablation chosen on validation.

Run after ``benchmarks/prm.py --workdir DIR`` has labeled a warehouse (it reuses the labels and the split):
``.venv/bin/python benchmarks/prm_offpolicy.py --workdir DIR --seeds 0 1 2``. For every recipe variant
(``--variants``, ``name=key:value,key:value`` over :class:`prm.training.PRMTrainConfig` fields) and seed it trains a
PRM on one label method (``--method``), then reports on the **validation** split (what the recipe is chosen by):
ProcessBench F1 at the threshold validation chooses, step sensitivity on sibling steps, and the off-policy
perturbation suite (:mod:`prm.evaluation.perturbations`: detection per wrong kind, right steps at or above the
threshold); and on the test sets, through :func:`prm.evaluation.folder.evaluate_folder`, the same figures with
95% intervals over problems, for the recipe validation chooses and the first one only. ``--score-floors`` also
re-scores the plain recipe's PRMs with a reference floor applied at scoring time only (no retraining). The issue's
example ("Zoe starts with 7 points...") is scored by every PRM. Each result is one JSON line; the summary line
names the recipe validation chooses; the test figures follow.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from prm.evaluation import heldout_solutions, perturbation_report, perturbation_run, split_test_sets, worst_detection
from prm.evaluation.folder import evaluate_folder
from prm.first_error import as_solutions, evaluate_processbench
from prm.metrics import score_pairs, sibling_pairs, step_sensitivity
from prm.scoring import Scorer, load_prm
from prm.training import PRMTrainConfig, TrainingSetConfig, build_training_set, stratified_splits, train_prm
from warehouse import connect

SOURCE = "bench"  # benchmarks/prm.py's source
ZOE = ("Zoe starts with 7 points. She loses 1. She wins 5. She loses 6. She wins 4. She loses 5. "
       "How many points does Zoe have?")
ZOE_PREFIX = ["7-1 = 6", "6+5 = 11"]
ZOE_THIRD = {"right": "11-6 = 5", "slip": "11-6 = 7", "wrong operand": "11-7 = 4", "wild value": "11-6 = 99",
             "nonsense": "hello world"}


def _args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workdir", required=True, help="benchmarks/prm.py's --workdir (its warehouse is reused)")
    p.add_argument("--method", default="truth", help="label method the PRMs train on")
    p.add_argument("--seeds", type=int, nargs="+", default=[0])
    p.add_argument("--train-max-steps", type=int, default=6)
    p.add_argument("--variants", nargs="+", default=["plain=ref_floor:none", "floor=ref_floor:0.05"],
                   help="name=key:value,... over PRMTrainConfig fields (empty: the defaults)")
    p.add_argument("--score-floors", type=float, nargs="*", default=[],
                   help="re-score the first variant's PRMs with these reference floors (scoring only)")
    p.add_argument("--prm-steps", type=int, default=None, help="optimizer steps (default: PRMTrainConfig's)")
    return p.parse_args()


def _variant(spec: str) -> tuple[str, dict[str, Any]]:
    name, _, rest = spec.partition("=")
    fields: dict[str, Any] = {}
    for item in filter(None, rest.split(",")):
        key, _, value = item.partition(":")
        fields[key] = None if value == "none" else json.loads(value)
    return name, fields


def _emit(obj: dict) -> None:
    print(json.dumps(obj), flush=True)


def val_figures(scorer: Scorer, val: list[dict]) -> dict[str, Any]:
    """What a recipe is chosen by: validation F1 (at its own threshold), sensitivity and perturbation detection."""
    scores = scorer.score_batch([(s["question"], s["steps"]) for s in val])
    solutions = as_solutions([{**s, "scores": sc} for s, sc in zip(val, scores, strict=True)])
    pb = evaluate_processbench(solutions, solutions)
    pairs = sibling_pairs(val)
    right, wrong = score_pairs(scorer.score_batch, {s["problem_id"]: s["question"] for s in val}, pairs)
    report = perturbation_report([perturbation_run(scorer.score_batch, val, pb.threshold)])
    kind, worst = worst_detection(report)
    sensitivity = step_sensitivity(pairs, right, wrong).value
    return {"val_f1": pb.f1, "val_threshold": pb.threshold, "val_sensitivity": sensitivity,
            "val_worst_kind": kind, "val_worst_detection": worst,
            "val_right_at_or_above_threshold": report["right_at_or_above_threshold"],
            "val_perturbation": {k: v["detection"] for k, v in report.items() if isinstance(v, dict) and
                                 "detection" in v}}


def zoe_scores(scorer: Scorer) -> dict[str, float]:
    """The issue's example: the third step's score after the two right ones."""
    items = [(ZOE, [*ZOE_PREFIX, step]) for step in ZOE_THIRD.values()]
    return {name: round(s[-1], 4) for name, s in zip(ZOE_THIRD, scorer.score_batch(items), strict=True)}


def test_figures(rows: list[dict], model: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for r in rows:
        if r["model"] != model:
            continue
        detail = json.loads(r["detail_json"] or "{}")
        key = f"{r['split']}:{r['metric']}"
        if r["metric"] in ("processbench_f1", "step_sensitivity", "right_at_or_above_threshold") or \
                r["metric"].startswith(("perturbation:", "reformatted:", "bon_gain@")):
            out[key] = [r["value"], detail.get("ci")]
    return out


def main() -> None:
    args = _args()
    root = Path(args.workdir)
    con = connect(root / "warehouse")
    data = TrainingSetConfig(method=args.method, train_max_steps=args.train_max_steps, source=SOURCE)
    heldout = heldout_solutions(con, stratified_splits(con, data), source=SOURCE)
    sets = split_test_sets(heldout["test"], args.train_max_steps)
    ts = build_training_set(con, data)
    summary: dict[str, list[dict]] = {}
    folders: dict[str, list[Path]] = {}
    for spec in args.variants:
        name, fields = _variant(spec)
        for seed in args.seeds:
            steps = {} if args.prm_steps is None else {"max_steps": args.prm_steps}
            config = replace(PRMTrainConfig(**steps, eval_steps=10_000, save_steps=10_000), seed=seed, **fields)
            folder = root / "offpolicy" / (name if args.method == "truth" else f"{args.method}-{name}") / f"seed{seed}"
            started = time.perf_counter()
            card = folder / "prm_card.json"
            if not card.is_file() or json.loads(card.read_text())["config"] != config.to_dict():
                train_prm(ts, folder, config)  # a folder already trained with this config is reused
            trained = time.perf_counter() - started
            scorer = load_prm(folder)
            row = {"variant": name, "seed": seed, "fields": fields, "train_s": round(trained, 1),
                   **val_figures(scorer, heldout["val"]), "zoe": zoe_scores(scorer)}
            _emit(row)
            summary.setdefault(name, []).append(row)
            folders.setdefault(name, []).append(folder)
            if args.score_floors and spec == args.variants[0]:
                for floor in args.score_floors:
                    scorer.ref_floor = floor
                    _emit({"variant": f"{name}+score_floor:{floor}", "seed": seed,
                           **val_figures(scorer, heldout["val"]), "zoe": zoe_scores(scorer)})

    def mean(rows: list[dict], key: str) -> float | None:
        values = [r[key] for r in rows if r.get(key) is not None]
        return sum(values) / len(values) if values else None

    table = [{"variant": name, "val_f1": mean(rows, "val_f1"), "val_sensitivity": mean(rows, "val_sensitivity"),
              "val_worst_detection": mean(rows, "val_worst_detection"),
              "val_right_at_or_above_threshold": mean(rows, "val_right_at_or_above_threshold")}
             for name, rows in summary.items()]
    # Validation chooses: the worst perturbation kind's detection first (the hole this ablation closes), then F1.
    best = max(table, key=lambda r: (round(r["val_worst_detection"] or 0, 2), r["val_f1"] or 0))["variant"]
    _emit({"summary": table, "chosen_on_validation": best})
    # Test figures only for the recipe validation chose and the first (the plain recipe), never to choose.
    for name in dict.fromkeys([_variant(args.variants[0])[0], best]):
        for folder in folders[name]:
            ev = evaluate_folder(folder, heldout, args.method, baselines=False, test_sets=sets)
            _emit({"variant": name, "folder": str(folder), "test": test_figures(ev.rows, ev.model)})


if __name__ == "__main__":
    main()
