"""What PRM quality each rollout buys: PRMs trained on labels bought at budgets of MC's full bill (issue 50).

Run: ``.venv/bin/python benchmarks/active.py --workdir W [--plot benchmarks/results/active.png]``.
On the problems of ``benchmarks/prm_quality.py`` (its workload, warehouse and labels: :func:`build_labels`, reused
when ``--workdir`` already holds them, a prm_quality workdir included), the train split's solutions are the pool
every method buys labels for, and MC's full bill is what MC paid for them (the stored labels' rollouts). For each
``--budgets`` share b, ``--methods``:

* ``mc``, ``omegaprm``, ``adaptive_mc`` (MC with adaptive rollouts, :mod:`prm.labeling.spending`): label the
  pool in a seeded random order of problems (:func:`benchmarks.active_curve.problem_order`) with a rollout budget of
  b x MC's bill (the labelers' own ``max_rollouts_per_partition``): labeling stops at the first solution that does
  not fit, and an OmegaPRM search stopped mid-way leaves partial solutions the training set drops;
* ``active``: ``--rounds`` rounds of select-label-retrain inside the same budget, an equal cumulative share per
  round (:func:`benchmarks.active_curve.round_caps`): round 0 labels a random seed set with the backing labeler
  (``--active-backing``), later rounds let the PRM trained on the labels so far pick the solutions it is unsure of
  (:class:`prm.labeling.ActiveConfig`'s plan: ActPRM's rule, most unsure first; trusted ones are skipped) and
  label those, OmegaPRM's binary search starting at the PRM's first predicted error.

Every labeler reads one rollout cache (the warehouse's ``rollouts``; adaptive MC's top-ups are sampled once, in the
``adaptive_rollouts`` stage, and stored), so costs are what each method would pay (cached rollouts count) while
nothing is generated twice. Each arm (method, budget, seed) gets a small warehouse of its own under
``--workdir``/arms (the benchmark's problems, solutions and steps, and the arm's labels under the method-table name
its PRM trains on), kept so a rerun labels nothing again; its PRM is trained and evaluated by
:func:`prm.experiments.compare_label_sources` exactly as prm_quality's are. Per (method, budget), the figures are
pooled over ``--seeds`` by :func:`prm.experiments.pooled_comparison` on the in-distribution test set: F1, step
sensitivity, worst off-policy kind and best-of-8 gain over majority vote, each with a 95% interval over test problems.

Progress is one JSON line per stage and per arm (its ETA: the PRMs left to train times the seconds per PRM of the
arms so far); the last line is one object: ``rows`` (``method``, ``budget_share``, ``rollouts`` and
``rollouts_per_step`` (means over seeds), ``prm_f1``, ``prm_f1_ci``, ``step_sensitivity``, ``offpolicy_worst`` (the
least-detected perturbation kind and its detection), ``bon_gain``, ``bon_gain_ci``, ``seeds`` (those whose PRM
trained)), ``active_vs_mc`` (:func:`benchmarks.active_curve.active_vs_mc`), ``goals``
(:func:`benchmarks.active_curve.goals`), ``mc_full_rollouts``, ``wall_s`` and ``config``. ``--plot`` draws PRM F1
against rollouts spent, one line per method.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Run as a script, this folder heads sys.path: the project root goes first, for benchmarks.* and tests.*.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.active_curve import (
    FULL,
    active_vs_mc,
    find_row,
    goals,
    mean,
    problem_order,
    rollout_limit,
    round_caps,
)
from benchmarks.prm_quality import DAY, SOURCE, add_workload_args, build_labels
from prm.datagen import SolutionToLabel, solutions_to_label
from prm.evaluation import IN_DISTRIBUTION, heldout_solutions, split_test_sets
from prm.experiments import ComparisonConfig, compare_label_sources, pooled_comparison
from prm.generation import SOLUTION_MAX_TOKENS, GenerationConfig, make_backend
from prm.labeling import ActiveConfig, MCConfig, OmegaPRMConfig, backend_sampler, get_labeler
from prm.labeling.partition import partition_step_labels
from prm.labeling.resume import chunk_by_problem
from prm.labeling.uncertainty import UNCERTAINTIES
from prm.models import ARITH_POLICY_NAME, model_version, prompter_for
from prm.reports import save_png
from prm.training import PRMTrainConfig, TrainingSetConfig, build_training_set, stratified_splits, train_prm
from warehouse import Warehouse, connect
from warehouse.methods import TRUTH

METHODS = ("mc", "omegaprm", "adaptive_mc", "active")
# The method-table name each arm's labels are stored (and its PRM trained) under, in the arm's own warehouse.
STORED_AS = {"mc": "mc", "omegaprm": "omegaprm", "adaptive_mc": "mc", "active": "active"}
BUDGETS = (0.02, 0.05, 0.10, 0.25, 1.0)
COPIED_TABLES = ("problems", "solutions", "steps")  # what an arm's warehouse shares with the benchmark's
WARM_CHUNK = 64  # solutions per sampler call while adaptive MC's top-ups are sampled (label_partition's chunk)
SPEND_FILE = "spend.json"  # an arm's labels are complete when this is written


def _args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_workload_args(p, 300, "problems per level (prm_quality's workload)")
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2],
                   help="per seed: the order solutions are bought in, and the PRMs' training seed")
    p.add_argument("--budgets", type=float, nargs="+", default=list(BUDGETS),
                   help="shares of MC's full bill (1.0 is always added: MC at 100%% is the reference)")
    p.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS, help="label methods compared")
    p.add_argument("--rounds", type=int, default=3, help="active: select-label-retrain rounds inside each budget")
    p.add_argument("--active-backing", default="omegaprm", choices=("omegaprm", "mc"),
                   help="active: the labeler of the solutions the PRM is unsure of")
    p.add_argument("--uncertainty", default=ActiveConfig.uncertainty, choices=UNCERTAINTIES,
                   help="active: the estimate (prm.labeling.uncertainty)")
    p.add_argument("--chunk", type=int, default=16, help="solutions per labeling call; a budget stopped inside one "
                   "leaves at most that chunk's OmegaPRM searches partial")
    p.add_argument("--workdir", default=None, help="keep the warehouse, the arms' labels and PRMs here (reruns "
                   "label nothing again); default: a temporary folder")
    p.add_argument("--plot", default=None, help="write PRM F1 against rollouts spent here (PNG)")
    args = p.parse_args(argv)
    if not all(0 < b <= FULL for b in args.budgets):
        p.error(f"--budgets {args.budgets}: each is a share of MC's full bill in (0, 1]")
    args.budgets = sorted({*args.budgets, FULL})
    if args.rounds < 1 or args.chunk < 1 or not args.seeds:
        p.error("--rounds and --chunk must be >= 1 and --seeds must name one seed or more")
    return args


def _emit(obj: dict) -> None:
    print(json.dumps(obj), flush=True)


def _note(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class LazyBackend:
    """The generation backend, started on first use: a run whose rollouts are all cached never starts vLLM."""

    def __init__(self, config: GenerationConfig) -> None:
        self._config = config
        self._backend: Any = None

    def __getattr__(self, name: str) -> Any:
        if self._backend is None:
            started = time.perf_counter()
            self._backend = make_backend(self._config)
            _emit({"engine_started_s": round(time.perf_counter() - started, 1)})
        return getattr(self._backend, name)

    def close(self) -> None:
        if self._backend is not None:
            self._backend.close()


@dataclass
class Bench:
    """What every arm shares: the settings, the benchmark's warehouse, the pool and the rollout cache."""

    args: argparse.Namespace
    wh: Warehouse
    data: TrainingSetConfig  # the split (method truth; each arm swaps in its own method)
    pool: list[SolutionToLabel]  # the train split's solutions: what every method buys labels for
    questions: dict[str, str]
    full_bill: int  # MC's rollouts on the pool
    sampler: Any
    backend: LazyBackend  # the sampler's engine, started only if a rollout is missing from the cache
    arms_root: Path
    new_rollouts: int = 0
    steps_of: dict[str, int] = field(default_factory=dict)

    def keep(self, rows: Sequence[dict], writer: str) -> None:
        """Store freshly sampled rollouts in the benchmark's cache (the next run, or arm, reuses them)."""
        if rows:
            self.wh.write("rollouts", list(rows), source=SOURCE, day=DAY, run_id="bench", writer=writer)
            self.new_rollouts += len(rows)

    def train_config(self, seed: int) -> PRMTrainConfig:
        steps = {} if self.args.prm_steps is None else {"max_steps": self.args.prm_steps}
        return PRMTrainConfig(**steps, eval_steps=10_000, save_steps=10_000, seed=seed)


@dataclass(frozen=True)
class Arm:
    method: str
    share: float
    seed: int

    @property
    def name(self) -> str:
        return f"{self.method}/b{self.share:g}/seed{self.seed}"

    def weight(self, rounds: int) -> int:
        """PRMs the arm trains: the unit of the ETA."""
        return rounds if self.method == "active" else 1


def rollout_config(method: str, args: argparse.Namespace, limit: int | None) -> MCConfig | OmegaPRMConfig:
    """The labeler config of a rollout method (``omegaprm`` as prm_quality labels with it) under ``limit``."""
    if method == "omegaprm":
        return OmegaPRMConfig(k=args.rollouts, screen=False, max_rollouts_per_partition=limit)
    if method == "adaptive_mc":
        return MCConfig(adaptive=True, max_rollouts_per_partition=limit)
    return MCConfig(n_rollouts=args.rollouts, max_rollouts_per_partition=limit)


def labeler_of(method: str, args: argparse.Namespace, limit: int | None) -> Any:
    return get_labeler("omegaprm" if method == "omegaprm" else "mc", rollout_config(method, args, limit))


def setup(args: argparse.Namespace, scratch: Path) -> Bench:
    """The benchmark's warehouse (prm_quality's, built or reused), the pool and MC's bill on it, the cache."""
    wh = Warehouse(scratch / "warehouse")
    started = time.perf_counter()
    if wh.files("step_labels"):
        _emit({"reused_labels": str(wh.root)})
    else:
        build_labels(wh, args)
        _emit({"stage": "samples_and_labels", "seconds": round(time.perf_counter() - started, 1)})
    data = TrainingSetConfig(method=TRUTH, train_max_steps=args.train_max_steps, val_share=args.val_share,
                             test_share=args.test_share, source=SOURCE, split_seed=args.seed)
    con = connect(wh.root)
    train_ids = {s["solution_id"] for s in
                 heldout_solutions(con, stratified_splits(con, data), splits=("train",), source=SOURCE)["train"]}
    pool = [s for s in solutions_to_label(wh, SOURCE, DAY, prompter_for(ARITH_POLICY_NAME))
            if s.solution_id in train_ids]
    mc = [r for r in wh.read_partition("step_labels", SOURCE, DAY).to_pylist()
          if r["method"] == "mc" and r["solution_id"] in train_ids]
    full_bill = sum(int(r["cost_rollouts"] or 0) for r in mc)
    if not pool or not full_bill:
        raise SystemExit(f"the train split holds {len(pool)} solutions and MC paid {full_bill} rollouts for them: "
                         "nothing to buy; raise --per-level")
    policy = model_version(ARITH_POLICY_NAME)
    existing = [r for r in wh.read_partition("rollouts", SOURCE, DAY).to_pylist() if r["model"] == policy]
    backend = LazyBackend(GenerationConfig(model=ARITH_POLICY_NAME, seed=args.seed))
    sampler = backend_sampler(backend, existing, model=policy, seed=args.seed, max_tokens=SOLUTION_MAX_TOKENS,
                              temperature=args.temperature)
    questions = {p["problem_id"]: p["question"] for p in wh.read_partition("problems", SOURCE, DAY).to_pylist()}
    bench = Bench(args, wh, data, pool, questions, full_bill, sampler, backend, scratch / "arms",
                  steps_of={s.solution_id: len(s.steps) for s in pool})
    _emit({"pool_solutions": len(pool), "pool_steps": sum(bench.steps_of.values()), "mc_full_rollouts": full_bill,
           "cached_rollouts": len(existing)})
    return bench


def warm_adaptive(bench: Bench) -> None:
    """Sample adaptive MC's top-ups for the whole pool once, in large calls, into the cache (its full bill too)."""
    started, before = time.perf_counter(), bench.new_rollouts
    labeler = labeler_of("adaptive_mc", bench.args, None)
    cost = 0
    for chunk in chunk_by_problem(bench.pool, WARM_CHUNK):
        run = labeler.label(chunk, bench.sampler)
        bench.keep(run.new_rollouts, "adaptive_mc")
        cost += run.cost_rollouts
    _emit({"stage": "adaptive_rollouts", "rollouts": cost, "share_of_mc": round(cost / bench.full_bill, 4),
           "new_rollouts": bench.new_rollouts - before, "seconds": round(time.perf_counter() - started, 1)})


def arm_warehouse(bench: Bench, folder: Path) -> Warehouse:
    """A fresh warehouse holding the benchmark's problems, solutions and steps (copied Delta tables)."""
    if folder.exists():
        shutil.rmtree(folder)  # an arm stopped before its spend was written: label it again from scratch
    for table in COPIED_TABLES:
        shutil.copytree(Path(bench.wh.root) / table, folder / table)
    return Warehouse(folder)


def buy(bench: Bench, labeler: Any, todo: Sequence[SolutionToLabel], arm_wh: Warehouse, stored_as: str,
        hints: Mapping[str, int] | None = None) -> tuple[int, set[str]]:
    """Label ``todo`` chunk by chunk (whole problems) until the labeler's budget stops it; write the labels under
    ``stored_as``. Returns the rollouts charged and the solutions that got label rows."""
    spent, labeled = 0, set()
    for chunk in chunk_by_problem(list(todo), bench.args.chunk):
        run = (labeler.label(chunk, bench.sampler, start_hints=hints) if hints is not None
               else labeler.label(chunk, bench.sampler))
        bench.keep(run.new_rollouts, stored_as)
        labels = tuple(dataclasses.replace(lb, method=stored_as) for lb in run.labels)
        arm_wh.write("step_labels", [lb.to_row() for lb in labels], source=SOURCE, day=DAY, run_id="bench",
                     writer=stored_as)
        spent += run.cost_rollouts
        labeled |= {lb.solution_id for lb in labels}
        if labeler.budget.stopped:
            break
    return spent, labeled


def label_fixed(bench: Bench, arm: Arm, limit: int | None, arm_wh: Warehouse) -> dict[str, Any]:
    """mc, omegaprm, adaptive_mc: the pool in the seed's order until the budget stops labeling."""
    if limit == 0:  # too small a share of too small a bill to buy one rollout
        return {"rollouts": 0, "labeled": []}
    labeler = labeler_of(arm.method, bench.args, limit)
    spent, labeled = buy(bench, labeler, problem_order(bench.pool, arm.seed), arm_wh, STORED_AS[arm.method])
    return {"rollouts": spent, "labeled": sorted(labeled)}


def label_active(bench: Bench, arm: Arm, limit: int | None, arm_wh: Warehouse, folder: Path) -> dict[str, Any]:
    """Rounds of select-label-retrain inside ``limit``: a random seed set first, then what the last PRM is unsure of."""
    args = bench.args
    by_id = {s.solution_id: s for s in bench.pool}
    spent, labeled, prm_dir, rounds = 0, set(), None, []
    for r, cap in enumerate(round_caps(limit, args.rounds)):
        left = None if cap is None else cap - spent
        hints = None
        if left == 0:  # nothing to spend this round (a tiny budget's share)
            todo, picked = [], {}
        elif r == 0:
            todo, picked = problem_order(bench.pool, arm.seed), {}
        else:
            config = ActiveConfig(prm=None if prm_dir is None else str(prm_dir), uncertainty=args.uncertainty,
                                  backing=args.active_backing, rollouts=args.rollouts, seed=arm.seed)
            plan = get_labeler("active", config).plan(
                bench.pool, questions=bench.questions, done=labeled,
                labeled=partition_step_labels(arm_wh, ("active",), SOURCE, DAY))  # what calibrated fits on
            todo = [by_id[sid] for sid in plan.selected]
            picked = {"unsure": len(plan.selected), "trusted": len(plan.trusted), "calibration": plan.calibration}
            hints = plan.first_error_hints() if args.active_backing == "omegaprm" else None
        labeler = labeler_of(args.active_backing, args, left) if todo else None
        got, new = buy(bench, labeler, todo, arm_wh, "active", hints) if todo else (0, set())
        spent, labeled = spent + got, labeled | new
        rounds.append({"round": r, "cap": cap, "rollouts": got, "labeled": len(new), **picked})
        _emit({"arm": arm.name, **rounds[-1]})
        if r + 1 < args.rounds and new:  # the last round's PRM is the arm's, trained below
            prm_dir = _round_prm(bench, arm_wh, folder / f"round{r}", arm.seed) or prm_dir
    return {"rollouts": spent, "labeled": sorted(labeled), "rounds": rounds}


def _round_prm(bench: Bench, arm_wh: Warehouse, out: Path, seed: int) -> Path | None:
    """A PRM on the active labels so far; None (with a note) when they cannot train one (no labels, one class)."""
    try:
        ts = build_training_set(arm_wh.root, dataclasses.replace(bench.data, method="active"))
    except ValueError as exc:
        _emit({"round_prm": None, "why": str(exc)[:200]})
        return None
    return train_prm(ts, out, bench.train_config(seed))


def run_arm(bench: Bench, arm: Arm) -> tuple[Any, dict[str, Any]]:
    """Buy the arm's labels (or reuse them), then train and evaluate its PRM as prm_quality does."""
    folder = bench.arms_root / arm.method / f"b{arm.share:g}" / f"seed{arm.seed}"
    spend_file = folder / SPEND_FILE
    if spend_file.exists():
        spend = json.loads(spend_file.read_text())
        arm_wh = Warehouse(folder / "warehouse")
    else:
        arm_wh = arm_warehouse(bench, folder / "warehouse")
        limit = rollout_limit(arm.share, bench.full_bill, unbounded_at_full=arm.method == "mc")
        spend = (label_active(bench, arm, limit, arm_wh, folder) if arm.method == "active"
                 else label_fixed(bench, arm, limit, arm_wh))
        spend["limit"] = limit
        spend_file.write_text(json.dumps(spend))
    spend["labeled_steps"] = sum(bench.steps_of.get(sid, 0) for sid in spend["labeled"])
    config = ComparisonConfig(methods=(STORED_AS[arm.method],), data=bench.data, train=bench.train_config(arm.seed))
    result = compare_label_sources(arm_wh.root, folder / "prm", config, progress=_note)[0]
    return dataclasses.replace(result, scores=[]), spend  # step_scores rows are not pooled: free their memory


def run_arms(bench: Bench) -> dict[tuple[str, float], dict[int, tuple[Any, dict]]]:
    """Every arm, with a progress line each: its ETA is the PRMs left to train times the seconds per PRM of the arms
    that trained one so far (labeling included; none before the first)."""
    args = bench.args
    arms = [Arm(m, b, s) for s in args.seeds for m in args.methods for b in args.budgets]
    left = sum(a.weight(args.rounds) for a in arms)
    trained_s, trained_weight = 0.0, 0  # arms that trained their PRM: the rate the ETA extrapolates
    out: dict[tuple[str, float], dict[int, tuple[Any, dict]]] = {}
    for i, arm in enumerate(arms):
        t0 = time.perf_counter()
        result, spend = run_arm(bench, arm)
        out.setdefault((arm.method, arm.share), {})[arm.seed] = (result, spend)
        seconds = time.perf_counter() - t0
        left -= arm.weight(args.rounds)
        if result.model is not None:
            trained_s, trained_weight = trained_s + seconds, trained_weight + arm.weight(args.rounds)
        _emit({"arm": arm.name, "done": f"{i + 1}/{len(arms)}", "rollouts": spend["rollouts"],
               "labeled_solutions": len(spend["labeled"]), "prm_f1": result.summary.get("prm_f1"),
               "skipped": result.summary.get("skipped"), "seconds": round(seconds, 1),
               "eta_s": round(trained_s / trained_weight * left) if trained_weight else None})
    return out


def _pooled_row(by_seed: Mapping[int, Any], sets: Mapping[str, list]) -> dict[str, Any]:
    """One arm's in-distribution row pooled over seeds (prm_quality's pooling)."""
    table = pooled_comparison({s: [r] for s, r in by_seed.items()}, {IN_DISTRIBUTION: sets[IN_DISTRIBUTION]})
    name = next(iter(by_seed.values())).method
    return next(r for r in table if r["method"] == name)


def paired_f1(arm: Mapping[int, Any], reference: Mapping[int, Any], sets: Mapping[str, list]
              ) -> tuple[float | None, list[float] | None]:
    """An arm's F1 minus a reference arm's, paired per test problem over the seeds both trained: prm_quality's
    ``prm_f1_vs_truth`` with the reference's PRM standing where the truth-trained one stands."""
    seeds = [s for s in arm if s in reference and arm[s].model is not None and reference[s].model is not None]
    if not seeds:
        return None, None
    merged = {s: [dataclasses.replace(reference[s], method=TRUTH), arm[s]] for s in seeds}
    table = pooled_comparison(merged, {IN_DISTRIBUTION: sets[IN_DISTRIBUTION]})
    row = next(r for r in table if r["method"] == arm[seeds[0]].method)
    return row.get("prm_f1_vs_truth"), row.get("prm_f1_vs_truth_ci")


def summarize(bench: Bench, results: Mapping[tuple[str, float], Mapping[int, tuple[Any, dict]]]
              ) -> tuple[list[dict], dict, dict]:
    """The rows, and the paired F1 differences from MC at 100% and (active) from OmegaPRM at the same budget."""
    con = connect(bench.wh.root)
    heldout = heldout_solutions(con, stratified_splits(con, bench.data), source=SOURCE)
    sets = split_test_sets(heldout["test"], bench.args.train_max_steps)
    rows = []
    for (method, share), by_seed in results.items():
        pooled = _pooled_row({s: r for s, (r, _) in by_seed.items()}, sets)
        spends = [sp for _, sp in by_seed.values()]
        per_step = [sp["rollouts"] / sp["labeled_steps"] for sp in spends if sp["labeled_steps"]]
        rows.append({"method": method, "budget_share": share, "rollouts": mean([sp["rollouts"] for sp in spends]),
                     "rollouts_per_step": mean(per_step), "prm_f1": pooled.get("prm_f1"),
                     "prm_f1_ci": pooled.get("prm_f1_ci"), "step_sensitivity": pooled.get("step_sensitivity"),
                     "offpolicy_worst": pooled.get("worst_detection"), "bon_gain": pooled.get("bon_gain"),
                     "bon_gain_ci": pooled.get("bon_gain_ci"),
                     "seeds": sorted(s for s, (r, _) in by_seed.items() if r.model is not None)})
    models = {key: {s: r for s, (r, _) in by_seed.items()} for key, by_seed in results.items()}
    reference = models.get(("mc", FULL), {})
    versus_mc = {key: paired_f1(arm, reference, sets) for key, arm in models.items()
                 if key[0] in ("active", "adaptive_mc")}
    versus_omega = {share: paired_f1(arm, models[("omegaprm", share)], sets) for (m, share), arm in models.items()
                    if m == "active" and ("omegaprm", share) in models}
    return rows, versus_mc, versus_omega


def plot(rows: Sequence[Mapping[str, Any]], path: str, full_bill: int) -> Path:
    """PRM F1 (95% interval bars) against rollouts spent, one line per method, MC at 100%'s interval shaded."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 4.8))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    for i, method in enumerate(dict.fromkeys(r["method"] for r in rows)):
        points = sorted((r for r in rows if r["method"] == method and r["prm_f1"] is not None and r["rollouts"]),
                        key=lambda r: r["rollouts"])
        if not points:
            continue
        xs, ys = [r["rollouts"] for r in points], [r["prm_f1"] for r in points]
        cis = [r["prm_f1_ci"] or [y, y] for r, y in zip(points, ys, strict=True)]
        yerr = [[max(0.0, y - c[0]) for y, c in zip(ys, cis, strict=True)],
                [max(0.0, c[1] - y) for y, c in zip(ys, cis, strict=True)]]
        ax.errorbar(xs, ys, yerr=yerr, marker="os^D"[i % 4], capsize=3, color=f"C{i}", label=method,
                    alpha=0.8)  # distinct markers: methods that bought the same labels overlap
    ref = find_row(rows, "mc", FULL)
    if ref is not None and ref.get("prm_f1_ci"):
        ax.axhspan(*ref["prm_f1_ci"], color="gray", alpha=0.15, label="MC at 100%: 95% interval")
    ax.set_xscale("log")
    ax.set_xlabel(f"rollouts spent (MC's full bill: {full_bill})")
    ax.set_ylabel("PRM F1, in-distribution test (95% interval)")
    ax.set_title("PRM quality per rollout bought")
    ax.legend(fontsize="small")
    return save_png(fig, path)


def main(argv: Sequence[str] | None = None) -> None:
    args = _args(argv)
    wall = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="prm-active-") as tmp:
        bench = setup(args, Path(args.workdir or tmp))
        try:
            if "adaptive_mc" in args.methods:
                warm_adaptive(bench)
            results = run_arms(bench)
        finally:
            bench.backend.close()
        rows, versus_mc, versus_omega = summarize(bench, results)
        out: dict[str, Any] = {
            "rows": rows, "active_vs_mc": active_vs_mc(rows, versus_mc, bench.full_bill),
            "goals": goals(rows, versus_mc, versus_omega, bench.full_bill), "mc_full_rollouts": bench.full_bill}
        if args.plot:
            out["plot"] = str(plot(rows, args.plot, bench.full_bill))
        out["wall_s"] = round(time.perf_counter() - wall, 1)
        out["config"] = {k: v for k, v in vars(args).items()}
        _emit(out)

if __name__ == "__main__":
    main()
