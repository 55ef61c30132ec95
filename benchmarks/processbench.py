"""Every label method against people: ProcessBench's human first-error labels, on this machine.

Each split's rows go in through the solution intake (:func:`prm.datagen.read_intake`, the reference file giving the
gold answers) into a warehouse partition, and every method labels them through the pipeline's own partition paths
(the ones the assets call): SymPy, SymPy with the reference's values, the shipped SmolLM2 judge (greedy, k=1, the
critique template), Monte-Carlo with early stop, OmegaPRM, full MC, progress and consensus, with
SmolLM2-135M-Instruct as the completer of every rollout. :func:`prm.labeling.people_audit_partition` then scores each
method with ProcessBench's official metric, with a 95% interval over problems, on every row and on the rows no choice
was made on (``prm.evaluation.choice_part == "report"``).

Run (resumable: the warehouse under ``--work`` keeps what is labeled; a rerun continues)::

    .venv/bin/python benchmarks/processbench.py labelers --work data/processbench-bench
    .venv/bin/python benchmarks/processbench.py train --work data/processbench-bench --out models/processbench-prm
    .venv/bin/python benchmarks/processbench.py prms --work data/processbench-bench --prm NAME=FOLDER ...
    .venv/bin/python benchmarks/processbench.py report --work data/processbench-bench

``labelers`` prints progress with an ETA on stderr and one JSON line per (method, split) on stdout; ``train``
labels every row of the MATH split with the label source chosen on validation rows and trains a SmolLM2 PRM on
it (a two-class head on the frozen backbone), reported on the GSM8K split only (never the split it trained on);
``prms`` scores PRMs (``--prm``) on the same rows; ``report`` prints the table, then one JSON object as its last line:
``{"labelers": [...], "prms": [...]}``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from prm.datagen import intake_rows, read_intake, replace_solutions, store_new_problems
from prm.evaluation import SHARED_PROCESSBENCH, evaluate_processbench_files, spread
from prm.format import PromptTemplate
from prm.label_audit import PeopleAudit, audit_against_people, people_markdown
from prm.labeling import (
    ConsensusConfig,
    JudgeConfig,
    MCConfig,
    OmegaPRMConfig,
    consensus_partition,
    derive_partition,
    judge_partition,
    label_partition,
    verify_partition,
)
from prm.metrics import REPORT, choice_part
from prm.models import JUDGE_NAME, SMOLLM2_NAME, model_version, prompter_for
from warehouse import Warehouse
from warehouse.methods import REFERENCE_METHODS

DAY = "2026-11-28"
SHARED = SHARED_PROCESSBENCH.parent
SPLITS = {  # split -> (file, reference problem file, task)
    "gsm8k": (SHARED_PROCESSBENCH / "gsm8k.json", SHARED / "gsm8k" / "test.jsonl", "gsm8k"),
    "math": (SHARED_PROCESSBENCH / "math.json", SHARED / "math500" / "test.jsonl", "math"),
}
# The recipe smollm2-gsm8k's prompt: what the completer continues.
TEMPLATE = PromptTemplate(system_prompt="You are a careful math tutor. Solve the problem step by step, one short "
                          "step per line.", instruction="End with a last line of the form 'The answer is: <number>'.")
METHODS = ("sympy", "sympy_ref", "judge", "mc_early_stop", "omegaprm", "mc", "progress", "consensus")


def _args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("stage", choices=("labelers", "train", "prms", "report"))
    p.add_argument("--work", type=Path, default=Path("data/processbench-bench"), help="warehouse and results folder")
    p.add_argument("--splits", nargs="+", default=list(SPLITS), choices=list(SPLITS))
    p.add_argument("--rows", type=int, nargs="+", default=[400, 300], help="rows per split, in --splits order")
    p.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    p.add_argument("--rollouts", type=int, default=2, help="MC rollouts per step prefix (Math-Shepherd: 8)")
    p.add_argument("--early-stop-rollouts", type=int, default=4)
    p.add_argument("--omegaprm-k", type=int, default=2)
    p.add_argument("--max-tokens", type=int, default=320, help="tokens per rollout")
    p.add_argument("--temperature", type=float, default=0.7, help="rollout temperature (SmolLM2 babbles at 1.0)")
    p.add_argument("--prm", action="append", default=[], metavar="NAME=FOLDER", help="prms: a PRM to score")
    p.add_argument("--trained-on", action="append", default=[], metavar="NAME=SPLIT",
                   help="prms: a PRM's training split, whose rows its figures leave out (its threshold may still "
                   "be chosen there)")
    p.add_argument("--train-split", default="math", choices=list(SPLITS), help="train: the split whose solutions "
                   "are labeled and trained on (never the one reported)")
    p.add_argument("--train-method", default="sympy_ref", help="train: the label source (chosen on validation rows)")
    p.add_argument("--base", default=SMOLLM2_NAME, help="train: the PRM backbone")
    p.add_argument("--train-steps", type=int, default=40)
    p.add_argument("--train-batch", type=int, default=4, help="train: solutions per step (8 x 1024 tokens took "
                   "13.8 GB here and was killed for memory)")
    p.add_argument("--train-max-length", type=int, default=512, help="train: tokens per solution")
    p.add_argument("--train-max-chars", type=int, default=1400, help="train: longer solutions are left out (~3.5 "
                   "characters per SmolLM2 token, so they fit --train-max-length)")
    p.add_argument("--out", type=Path, default=Path("models/processbench-prm"), help="train: the PRM folder")
    return p.parse_args()


class Progress:
    """Solutions done of a total, with an ETA from the rate so far (printed on stderr)."""

    def __init__(self, what: str, total: int) -> None:
        self.what, self.total, self.start = what, total, time.perf_counter()

    def __call__(self, done: int) -> None:
        took = time.perf_counter() - self.start
        eta = took / done * (self.total - done) if done else float("nan")
        print(f"[{self.what}] {done}/{self.total} solutions, {took:.0f}s, ETA {eta:.0f}s", file=sys.stderr, flush=True)


def spread_sample(path: Path, rows: int, work: Path) -> Path:
    """The file itself when it has at most ``rows`` rows, else a copy of ``rows`` of them evenly spread over it
    (:func:`prm.evaluation.spread`): ProcessBench's MATH file lists its 500 wrong-answer rows first, so its first
    300 rows hold no all-right row and no F1 could be computed on them."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if len(data) <= rows:
        return path
    out = work / f"{path.stem}_{rows}.json"
    out.write_text(json.dumps([data[i] for i in spread(len(data), rows)]), encoding="utf-8")
    return out


def ingest(wh: Warehouse, split: str, rows: int, work: Path) -> None:
    """``rows`` rows of the split, spread over its file, as the partition ``pb_<split>`` (skipped when there)."""
    source = f"pb_{split}"
    if wh.files("solutions") and len(wh.read_partition("solutions", source, DAY)) == rows:
        return
    path, reference, task = SPLITS[split]
    intake = read_intake(spread_sample(path, rows, work), source=source, reference=reference, task=task)
    store_new_problems(wh, list(intake.problems), source=source, day=DAY, run_id="bench-intake")
    sols, steps, counts = intake_rows(intake.loaded)
    replace_solutions(wh, sols, steps, source=source, day=DAY, run_id="bench-intake")
    print(json.dumps({"split": split, "intake": counts.metadata(), "reference_matched": intake.n_reference_matched,
                      "gold_from_outcomes": intake.n_gold_from_outcomes}), flush=True)


def label(wh: Warehouse, method: str, split: str, args: argparse.Namespace, engines: dict[str, Any]) -> float:
    """Label partition ``pb_<split>`` with ``method`` (resuming); the seconds it took this time."""
    from prm.generation import GenerationConfig, make_backend

    source = f"pb_{split}"
    kw = {"source": source, "day": DAY, "run_id": f"bench-{method}"}
    prompter = prompter_for(SMOLLM2_NAME, TEMPLATE)

    def engine(name: str) -> Any:
        if name not in engines:
            for other in list(engines):  # one engine at a time: two would share two cores
                engines.pop(other).close()
            engines[name] = make_backend(GenerationConfig(model=name, seed=0))
        return engines[name]

    start = time.perf_counter()
    done = {r["method"] for r in wh.read_partition("step_labels", source, DAY).to_pylist()}
    if method in done and method not in ("mc", "mc_early_stop", "omegaprm"):
        return 0.0
    if method == "sympy":
        verify_partition(wh, **kw)
    elif method in ("sympy_ref", "progress"):
        derive_partition(wh, method, **kw)
    elif method == "consensus":
        consensus_partition(wh, ConsensusConfig(), **kw)
    elif method == "judge":
        judge_partition(wh, lambda: engine(JUDGE_NAME), JudgeConfig(k=1, temperature=0.0), policy_prompt=prompter,
                        **kw)
    else:
        config = {"mc": MCConfig(n_rollouts=args.rollouts),
                  "mc_early_stop": MCConfig(n_rollouts=args.early_stop_rollouts, early_stop=True),
                  "omegaprm": OmegaPRMConfig(k=args.omegaprm_k, screen=False)}[method]
        total = len(wh.read_partition("solutions", source, DAY))
        bar = Progress(f"{split} {method}", total)
        label_partition(wh, method, config, lambda: engine(SMOLLM2_NAME), model=model_version(SMOLLM2_NAME),
                        prompt=prompter, max_tokens=args.max_tokens, temperature=args.temperature, chunk_solutions=25,
                        progress=lambda msg: bar(int(msg.split("labeled ")[1].split("/")[0])), **kw)
    return time.perf_counter() - start


def audits(wh: Warehouse, split: str, seconds: dict[str, float]) -> list[dict[str, Any]]:
    """Every labeled method of the split against people, on all rows and on the report part."""
    source = f"pb_{split}"
    sols = wh.read_partition("solutions", source, DAY).to_pylist()
    problems = {p["problem_id"]: p["question"] for p in wh.read_partition("problems", source, DAY).to_pylist()}
    steps = wh.read_partition("steps", source, DAY).to_pylist()
    labels = wh.read_partition("step_labels", source, DAY).to_pylist()
    out = []
    for method in METHODS:
        mine = [r for r in labels if r["method"] == method]
        if not mine:
            continue
        for part, chosen in (("all", sols), (REPORT, [s for s in sols if choice_part(problems[s["problem_id"]])
                                                       == REPORT])):
            a = audit_against_people(method, mine, steps, chosen, split=split, seconds=seconds.get(method),
                                     uses_reference=method in REFERENCE_METHODS)
            scale = len(chosen) / len(sols)  # the cost of the part's share of the run
            row = {**a.to_dict(), "part": part}
            if row["seconds_per_solution"] is not None:
                row["seconds_per_solution"] = seconds[method] * scale / max(len(chosen), 1)
            out.append(row)
    return out


def labelers(args: argparse.Namespace) -> None:
    wh = Warehouse(str(args.work / "warehouse"))
    timing_path = args.work / "seconds.json"
    seconds: dict[str, dict[str, float]] = json.loads(timing_path.read_text()) if timing_path.is_file() else {}
    engines: dict[str, Any] = {}
    try:
        for split, rows in zip(args.splits, args.rows, strict=True):
            ingest(wh, split, rows, args.work)
        for method in args.methods:
            for split in args.splits:
                took = label(wh, method, split, args, engines)
                per = seconds.setdefault(split, {})
                per[method] = per.get(method, 0.0) + took
                timing_path.write_text(json.dumps(seconds, indent=1))
                print(json.dumps({"split": split, "method": method, "seconds": round(per[method], 1)}), flush=True)
    finally:
        for backend in engines.values():
            backend.close()


def train(args: argparse.Namespace) -> None:
    """Label every row of ``--train-split`` with ``--train-method`` (a derived method: no engine) through the intake
    and train a PRM on the solutions whose first error it located."""
    from prm.format import labels_from_first_error
    from prm.training import PRMTrainConfig, train_prm

    wh = Warehouse(str(args.work / "warehouse"))
    split, source = args.train_split, f"pb_{args.train_split}_train"
    path, reference, task = SPLITS[split]
    if not wh.files("solutions") or not len(wh.read_partition("solutions", source, DAY)):
        intake = read_intake(path, source=source, reference=reference, task=task)
        store_new_problems(wh, list(intake.problems), source=source, day=DAY, run_id="bench-train")
        sols, steps, _ = intake_rows(intake.loaded)
        replace_solutions(wh, sols, steps, source=source, day=DAY, run_id="bench-train")
    run = derive_partition(wh, args.train_method, source=source, day=DAY, run_id="bench-train")
    first: dict[str, int | None] = {}
    for r in run.rows():
        first.setdefault(r["solution_id"], r["first_error"])
    questions = {p["problem_id"]: p["question"] for p in wh.read_partition("problems", source, DAY).to_pylist()}
    steps_of: dict[str, list[str]] = {}
    for r in sorted(wh.read_partition("steps", source, DAY).to_pylist(), key=lambda r: r["step_idx"]):
        steps_of.setdefault(r["solution_id"], []).append(r["text"])
    rows = [{"prompt": questions[s["problem_id"]], "completions": steps_of[s["solution_id"]],
             "labels": labels_from_first_error(len(steps_of[s["solution_id"]]), first[s["solution_id"]])}
            for s in wh.read_partition("solutions", source, DAY).to_pylist()
            if first.get(s["solution_id"]) is not None]
    located = len(rows)
    # Only what fits the context: the trainer refuses a set it would have to cut by more than a few rows.
    rows = [r for r in rows if len(r["prompt"]) + sum(len(t) + 2 for t in r["completions"]) <= args.train_max_chars]
    wrong = sum(False in r["labels"] for r in rows)
    print(json.dumps({"train_split": split, "label_method": args.train_method, "rows": len(rows),
                      "rows_with_an_error": wrong, "unlocated": len(first) - located,
                      "too_long": located - len(rows)}), flush=True)
    # A linear probe of the frozen backbone: LoRA steps of 4 x 1024 tokens took over 2 minutes each on one thread
    # here beside the labelers' engine (and 8 x 1024 was killed for memory at 13.8 GB).
    config = PRMTrainConfig(base_model=args.base, head="classifier", freeze_backbone=True, learning_rate=1e-3,
                            max_steps=args.train_steps, batch_size=args.train_batch,
                            max_length=args.train_max_length, torch_threads=1,
                            warmup_steps=5, eval_steps=10_000, save_steps=10_000, logging_steps=5)
    start = time.perf_counter()
    train_prm(rows, args.out, config)
    print(json.dumps({"trained": str(args.out), "train_s": round(time.perf_counter() - start, 1),
                      "config": config.to_dict()}), flush=True)


def prms(args: argparse.Namespace) -> None:
    """Score each ``--prm`` on the labelers' rows of every split (the same spread sample), and keep the figures in
    ``prms.json`` for ``report``; a PRM's training split (``--trained-on``) only chooses its other threshold."""
    files = {s: spread_sample(SPLITS[s][0], rows, args.work) for s, rows in zip(args.splits, args.rows, strict=True)}
    trained_on = dict(spec.partition("=")[::2] for spec in args.trained_on)
    path = args.work / "prms.json"
    out = [p for p in (json.loads(path.read_text()) if path.is_file() else [])
           if p["prm"] not in {spec.partition("=")[0] for spec in args.prm}]
    for spec in args.prm:
        name, _, folder = spec.partition("=")
        result = evaluate_processbench_files(folder, files, model=name)
        for line in result.lines():
            print(f"{name}: {line}", flush=True)
        out += [{"prm": name, **r.to_json(), "seconds": result.seconds} for r in result.results
                if r.split != trained_on.get(name)]
        path.write_text(json.dumps(out, indent=1))


def report(args: argparse.Namespace) -> None:
    wh = Warehouse(str(args.work / "warehouse"))
    seconds = json.loads((args.work / "seconds.json").read_text())
    labeler_rows = [r for split in args.splits for r in audits(wh, split, seconds.get(split, {}))]
    shown = [PeopleAudit(**{k: v for k, v in r.items() if k != "part"} | {"f1_ci": tuple(r["f1_ci"] or ()) or None})
             for r in labeler_rows if r["part"] == REPORT]
    print(people_markdown(shown))
    prms = json.loads((args.work / "prms.json").read_text()) if (args.work / "prms.json").is_file() else []
    keys = ("method", "split", "part", "rows", "uses_reference", "error_acc", "correct_acc", "f1", "f1_ci",
            "step_precision", "step_recall", "rollouts_per_solution", "tokens_per_solution", "seconds_per_solution")
    print(json.dumps({"labelers": [{k: r[k] for k in keys} for r in labeler_rows], "prms": prms}))


if __name__ == "__main__":
    arguments = _args()
    {"labelers": labelers, "train": train, "prms": prms, "report": report}[arguments.stage](arguments)
