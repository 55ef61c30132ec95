"""One results page per study, generated from the committed logs in ``benchmarks/results/`` when the site builds.

Each :class:`Study` names its logs, the command that wrote them and a renderer that turns the logs' JSON into
Markdown tables. The prose here says what a table measures, never what it found: the figures come from the logs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docs.hooks.results_io import MISSING, interval, json_objects, last_with, num, provenance, table, with_ci

Logs = dict[str, list[dict[str, Any]]]


@dataclass(frozen=True)
class Study:
    """A results page: its file name (``results/<slug>.md``), title, logs, command and what it measures."""

    slug: str
    title: str
    logs: tuple[str, ...]
    command: str
    measures: str
    render: Callable[[Logs], str]
    images: tuple[str, ...] = ()


def _label(method: str) -> str:
    names = {"truth": "truth-trained PRM", "mc": "MC-trained PRM", "omegaprm": "OmegaPRM-trained PRM",
             "baseline:constant": "constant", "baseline:length": "length",
             "baseline:policy_loglik": "policy log-likelihood", "baseline:implicit_prm": "implicit PRM (outcome)"}
    return names.get(method, method)


def _comparison(logs: Logs) -> str:
    (objects,) = logs.values()
    summary = last_with(objects, "comparison")
    bon_n = summary.get("bon_n", "N")
    paired = any(r.get("prm_f1_vs_truth") is not None for r in summary["comparison"])
    header = ["test", "scorer", "label F1 vs truth", "rollouts / step", "PRM ProcessBench F1", "step sensitivity",
              f"best-of-{bon_n}", "gain over majority"]
    if paired:
        header += ["F1 vs truth (paired)", "sensitivity vs truth (paired)", f"best-of-{bon_n} vs truth (paired)"]
    rows, refs = [], {}
    for r in summary["comparison"]:
        row = [r["test"].replace("_", " "), _label(r["method"]), num(r.get("label_f1")),
               num(r.get("rollouts_per_step")), with_ci(r.get("prm_f1"), r.get("prm_f1_ci")),
               with_ci(r.get("step_sensitivity"), r.get("step_sensitivity_ci")),
               with_ci(r.get("bon_acc"), r.get("bon_acc_ci")), with_ci(r.get("bon_gain"), r.get("bon_gain_ci"),
                                                                        signed=True)]
        if paired:
            row += [with_ci(r.get(f"{k}_vs_truth"), r.get(f"{k}_vs_truth_ci"), signed=True)
                    for k in ("prm_f1", "step_sensitivity", "bon_acc")]
        rows.append(row)
        refs[r["test"]] = (r.get("majority_acc"), r.get("oracle_acc"))
    out = [table(header, rows), "",
           table(["test", "majority vote", "oracle (pass@N)"],
                 [[t.replace("_", " "), num(m), num(o)] for t, (m, o) in refs.items()])]
    per_seed = [o["comparison_row"] | {"seed": o.get("seed")} for o in objects if "comparison_row" in o]
    if per_seed:
        out += ["", "### Per seed", "",
                table(["seed", "test", "scorer", "PRM ProcessBench F1", "step sensitivity", f"best-of-{bon_n} gain"],
                      [[r["seed"], r["test"].replace("_", " "), _label(r["method"]), num(r.get("prm_f1")),
                        num(r.get("step_sensitivity")), num(r.get("bon_gain"), signed=True)] for r in per_seed])]
    speed = {k: summary.get(k) for k in ("train_tokens_per_s", "score_steps_per_s_batched",
                                          "score_steps_per_s_single", "batched_speedup")}
    out += ["", "### Speed", "", table(["measure", "value"], [[k, num(v, 2)] for k, v in speed.items()])]
    return "\n".join(out)


def _curves(logs: Logs) -> str:
    points = [o for o in logs["prm_curves.log"] if "method" in o and "prm_f1" in o]
    rows = [[_label(o["method"]), num(o.get("seed"), 0) if "seed" in o else MISSING,
             num(o.get("solutions"), 0), num(o.get("steps"), 0),
             with_ci(o.get("prm_f1"), o.get("prm_f1_ci")), num(o.get("step_auc")),
             with_ci(o.get("step_sensitivity"), o.get("step_sensitivity_ci")),
             with_ci(o.get("bon_acc"), o.get("bon_acc_ci")), with_ci(o.get("bon_gain"), o.get("bon_gain_ci"),
                                                                     signed=True)] for o in points]
    out = [table(["scorer", "seed", "train solutions", "optimizer steps", "ProcessBench F1", "step AUC",
                  "step sensitivity", "best-of-8", "gain over majority"], rows)]
    refs = {(o.get("majority_acc"), o.get("oracle_acc")) for o in points if "majority_acc" in o}
    out += ["", table(["majority vote", "oracle"], [[num(m), num(o)] for m, o in sorted(refs, key=str)])]
    harness = logs.get("prm_curves_harness.log", [])
    if harness:
        out += ["", "### Synthetic hard negatives (classification head, one-off run, no interval)", "",
                table(["train rows", "optimizer steps", "ProcessBench F1", "step AUC", "step sensitivity",
                       "best-of-8", "majority", "oracle"],
                      [[num(o.get("ntrain"), 0), num(o.get("steps"), 0), num(o.get("f1")), num(o.get("auc")),
                        num(o.get("sens")), num(o.get("bon")), num(o.get("maj")), num(o.get("oracle"))]
                       for o in harness])]
    return "\n".join(out)


def _offpolicy(logs: Logs) -> str:
    ablation = [o for o in logs["prm_offpolicy_ablation.log"] if "val_f1" in o]
    out = ["### Recipes on validation (truth labels, seed 0)", "",
           table(["variant", "settings", "val F1", "val step sensitivity", "least-detected kind",
                  "right steps >= threshold"],
                 [[o["variant"], ", ".join(f"{k}={v}" for k, v in (o.get("fields") or {}).items()) or "defaults",
                   num(o.get("val_f1")), num(o.get("val_sensitivity")),
                   f"{num(o.get('val_worst_detection'))} (`{o.get('val_worst_kind')}`)",
                   num(o.get("val_right_at_or_above_threshold"))] for o in ablation])]
    kinds = sorted({k for o in ablation for k in o.get("val_perturbation", {})})
    out += ["", "Detection on validation, per wrong kind:", "",
            table(["kind", *[o["variant"] for o in ablation]],
                  [[f"`{k}`", *[num(o.get("val_perturbation", {}).get(k)) for o in ablation]] for k in kinds])]
    zoe = [o for o in ablation if o.get("zoe")]
    if zoe:
        steps = list(zoe[0]["zoe"])
        out += ["", "A worked example (one problem, the third step varied), each recipe's score:", "",
                table(["third step", *[o["variant"] for o in zoe]],
                      [[s, *[num(o["zoe"].get(s)) for o in zoe]] for s in steps])]
    for name, objects in logs.items():
        if name == "prm_offpolicy_ablation.log":
            continue
        test = last_with(objects, "test")
        labels = "OmegaPRM" if "omegaprm" in name else "truth"
        val = next((o for o in objects if "val_f1" in o), {})
        out += ["", f"### The chosen recipe on {labels} labels: test sets (`{test['variant']}`)", "",
                f"Validation: F1 {num(val.get('val_f1'))}, step sensitivity {num(val.get('val_sensitivity'))}, "
                f"least-detected kind {num(val.get('val_worst_detection'))}.", ""]
        for split in ("in_distribution", "easy_to_hard"):
            metrics = {k.split(":", 1)[1]: v for k, v in test["test"].items() if k.startswith(split + ":")}
            if not metrics:
                continue

            def cell(key: str, signed: bool = False, m: dict = metrics) -> str:
                value = m.get(key)
                return with_ci(value[0], value[1], signed=signed) if isinstance(value, list) else MISSING

            wrong = {k.split(":", 1)[1]: v for k, v in metrics.items() if k.startswith("perturbation:")}
            worst = min(wrong.items(), key=lambda kv: kv[1][0]) if wrong else None
            out += [f"**{split.replace('_', ' ')}**", "",
                    table(["PRM F1", "step sensitivity", "best-of-8 gain over majority", "least-detected wrong kind",
                           "right steps >= threshold"],
                          [[cell("processbench_f1"), cell("step_sensitivity"), cell("bon_gain@8", signed=True),
                            f"{with_ci(*worst[1])} (`{worst[0]}`)" if worst else MISSING,
                            cell("right_at_or_above_threshold")]]), "",
                    table(["kind", "detection [95% CI]"],
                          [[f"`{k.split(':', 1)[1]}` ({k.split(':', 1)[0]})", cell(k)]
                           for k in metrics if k.startswith(("perturbation:", "reformatted:"))]), ""]
    return "\n".join(out)


_ARM_NAMES = {"outcome": "outcome only", "prm_min": "PRM min-form + outcome", "prm_sum": "PRM summed + outcome",
              "process": "process (per-token)", "prm_min_prof": "PRM min-form + outcome, PROF filter",
              "prm_soft_min": "PRM soft min + outcome", "process_pure": "process, PURE credit",
              "process_clip_delta": "process, Clip-Delta credit", "prime": "PRIME from the step PRM",
              "prime_plain": "PRIME from the policy", "first_error": "first error splits credit (VPPO) + outcome",
              "progrs": "PRM on wrong answers (PROGRS) + outcome",
              "flawed_penalty": "flawed right answers penalised (FAPO)"}


def _hacked(a: dict[str, Any]) -> str:
    """The hack mark of one arm: the seeds marked (pooled logs), the step it fired at (one run), or ``-``."""
    if "hacked_seeds" in a:
        return ", ".join(str(s) for s in a["hacked_seeds"]) or "none"
    if a.get("hacked"):
        return f"at step {num(a.get('hacked_at'), 0)}"
    return "no" if "hacked" in a else MISSING


def _arms_table(arms: dict[str, Any], pooled: bool) -> str:
    """One row per arm. Logs written before the flawed-positive counts, the held-out curve and the hack rule lack
    the last columns' keys; each column appears only when some arm has it."""
    header = ["arm", "accuracy before -> after", "gain [95% CI]"]
    header += ["gain per seed", "vs outcome [95% CI]"] if pooled else []
    header += ["per-step error", "steps / completion", "characters"]
    reach = any("steps_to_outcome_final" in a for a in arms.values())
    marked = any("hacked" in a or "hacked_seeds" in a for a in arms.values())
    flawed = any(a.get("flawed_after") is not None for a in arms.values())
    header += ["flawed positives before -> after"] if flawed else []
    header += ["flawed vs outcome [95% CI]"] if flawed and pooled else []
    header += ["steps to outcome's final accuracy"] if reach else []
    header += ["hacked seeds" if pooled else "hacked"] if marked else []
    rows = []
    for arm, a in arms.items():
        gain = a.get("acc_gain", (a.get("acc_after") or 0) - (a.get("acc_before") or 0))
        before, after = with_ci(a.get("acc_before"), a.get("acc_before_ci")), with_ci(a.get("acc_after"),
                                                                                      a.get("acc_after_ci"))
        row = [_ARM_NAMES.get(arm, arm), f"{before} -> {after}", with_ci(gain, a.get("acc_gain_ci"), signed=True)]
        if pooled:
            row += [", ".join(num(g, signed=True) for g in a.get("gain_per_seed", [])),
                    with_ci(a.get("vs_outcome"), a.get("vs_outcome_ci"), signed=True)]
        row += [f"{num(a.get('step_err_before'))} -> {num(a.get('step_err_after'))}",
                f"{num(a.get('steps_before'), 2)} -> {num(a.get('steps_after'), 2)}",
                f"{num(a.get('chars_before'), 0)} -> {num(a.get('chars_after'), 0)}"]
        if flawed:
            row.append(f"{num(a.get('flawed_before'))} -> {with_ci(a.get('flawed_after'), a.get('flawed_after_ci'))}")
        if flawed and pooled:
            row.append(with_ci(a.get("flawed_vs_outcome"), a.get("flawed_vs_outcome_ci"), signed=True))
        if reach:
            steps, spread = a.get("steps_to_outcome_final"), interval(a.get("steps_to_outcome_final_ci"), 0)
            total = num(a.get("steps_total"), 0)
            row.append(MISSING if steps is None else f"{num(steps, 0)} / {total} {spread}".rstrip())
        if marked:
            row.append(_hacked(a))
        rows.append(row)
    return table(header, rows)


@dataclass(frozen=True)
class Pool:
    """A pooled RL log (``benchmarks/rl_seeds.py``'s JSON), the commands that wrote it and the picture it drew."""

    log: str
    command: str
    image: str
    note: str = ""  # what sets this pool's runs apart, for the README row and the page


# The pooled RL logs, newest first: an arm held by several is shown from the first (the newest code) only.
RL_POOLS: tuple[Pool, ...] = (
    Pool("rl_seeds_validated_threshold.log",
         "python benchmarks/rl_threshold.py; for S in 0 1 2: python benchmarks/rl.py --prm arith-prm --arms outcome "
         "first_error --error-threshold T_PB --seed S --eval-every 20 --steps 100 --out "
         "benchmarks/results/rl_verified_arms_val/seedS, then the same with --arms outcome flawed_penalty "
         "--error-threshold T_FLAWED (outcome read back from rl_verified_arms); python benchmarks/rl_seeds.py "
         "benchmarks/results/rl_verified_arms_val/seed0 benchmarks/results/rl_verified_arms_val/seed1 "
         "benchmarks/results/rl_verified_arms_val/seed2 --plot benchmarks/results/rl_seeds_validated_threshold.png",
         "rl_seeds_validated_threshold.png",
         "`first_error` and `flawed_penalty` at the wrong-step thresholds chosen on validation problems "
         "(`rl_threshold.log`: ProcessBench F1 for `first_error`, flawed-positive F1 among right answers for "
         "`flawed_penalty`)"),
    Pool("rl_seeds_verified_arms.log",
         "python benchmarks/rl.py --prm arith-prm --arms outcome prm_min first_error progrs flawed_penalty --seed S "
         "--eval-every 20 --steps 100 --out benchmarks/results/rl_verified_arms/seedS; python benchmarks/rl_seeds.py "
         "benchmarks/results/rl_verified_arms/seed0 benchmarks/results/rl_verified_arms/seed1 "
         "benchmarks/results/rl_verified_arms/seed2 --plot benchmarks/results/rl_seeds_verified_arms.png",
         "rl_seeds_verified_arms.png"),
    Pool("rl_seeds.log",
         "python benchmarks/rl.py --prm prm/shipped/arith-prm --arms A --seed S --out DIR/seedS; "
         "python benchmarks/rl_seeds.py DIR/seed0 DIR/seed1 DIR/seed2 --plot benchmarks/results/rl_seeds.png",
         "rl_seeds.png"),
)


def pooled_rl(logs: Logs) -> list[tuple[Pool, dict[str, Any], list[str]]]:
    """Each pooled RL log in ``logs``, newest first: its pool, its arms and those of them a newer log holds."""
    out, seen = [], set()
    for pool in RL_POOLS:
        if pool.log in logs:
            arms = last_with(logs[pool.log], "arms")["arms"]
            out.append((pool, arms, [a for a in arms if a in seen]))
            seen |= set(arms)
    return out


def _rl(logs: Logs) -> str:
    out = []
    for pool, all_arms, newer in pooled_rl(logs):
        arms = all_arms  # every run of the log; the README shows an arm from the newest log holding it
        runs = last_with(logs[pool.log], "arms").get("runs") or []
        out += [f"### `{pool.log}`", "", *([pool.note[0].upper() + pool.note[1:] + ".", ""] if pool.note else []),
                "```bash", pool.command, "```", "",
                "Runs pooled (one `benchmarks/rl.py --seed S` folder per seed): "
                + ", ".join(f"`{Path(r).name if Path(r).is_absolute() else r}`" for r in runs)
                + ". Arms run on fewer seeds are pooled over their own and compared with outcome-only on the seeds "
                "that ran both.", ""]
        if newer:
            out += ["Also in a newer log above (the README shows them from there): " + ", ".join(
                f"`{a}`" for a in newer) + ". Each arm below is paired with this log's own `outcome`.", ""]
        out += [table(["arm", "seeds", "compared with outcome on"],
                      [[_ARM_NAMES.get(a, a), num(r.get("seeds"), 0), num(r.get("vs_outcome_seeds"), 0)
                        if "vs_outcome_seeds" in r else MISSING] for a, r in arms.items()]), "",
                _arms_table(arms, pooled=True), ""]
        online = {a: r["online_step_auc_curve"] for a, r in arms.items() if r.get("online_step_auc_curve")}
        if online:
            out += ["The online PRM's step AUC on the held-out samples (exact step truth), mean over seeds, as it is "
                    "updated on every batch from outcomes:", "",
                    table(["arm", *[f"step {num(step, 0)}" for step, _ in next(iter(online.values()))]],
                          [[_ARM_NAMES.get(a, a), *[num(v) for _, v in curve]] for a, curve in online.items()]), ""]
        out += [f"![{pool.image}](img/{pool.image})", ""]
    return "\n".join(out)


@dataclass(frozen=True)
class FlywheelRuns:
    """A pooled flywheel log (``benchmarks/flywheel_seeds.py``'s JSON), its seeds' logs, the commands that wrote
    them, the picture and what sets the runs apart."""

    pooled: str
    seeds: tuple[str, ...]
    command: str
    image: str
    note: str


# The flywheel's pooled runs, newest first.
FLYWHEEL_RUNS: tuple[FlywheelRuns, ...] = (
    FlywheelRuns("flywheel_seeds.log", ("flywheel_seed0.log", "flywheel_seed1.log"),
                 "for S in 0 1: python benchmarks/flywheel.py --rounds 3 --seed S --arm flawed_penalty "
                 "--error-threshold T_FLAWED --on-rejected-prm keep_last --out models/flywheel/flawed-seedS; "
                 "python benchmarks/flywheel_seeds.py models/flywheel/flawed-seed0 models/flywheel/flawed-seed1 "
                 "--plot benchmarks/results/flywheel.png",
                 "flywheel.png",
                 "RL arm `flawed_penalty` at its wrong-step threshold chosen on validation (`rl_threshold.log`); a "
                 "round whose retrained PRM the regression check rejects rewards its RL with the last accepted PRM"),
    FlywheelRuns("flywheel_prm_min_seeds.log", ("flywheel_prm_min_seed0.log", "flywheel_prm_min_seed1.log"),
                 "for S in 0 1: python benchmarks/flywheel.py --rounds 3 --seed S; python benchmarks/flywheel_seeds.py "
                 "models/flywheel/benchmark-seed0 models/flywheel/benchmark-seed1 --plot "
                 "benchmarks/results/flywheel_prm_min.png",
                 "flywheel_prm_min.png", "RL arm `prm_min` (the flywheel's default)"),
)


def _reward_prm(row: dict[str, Any]) -> str:
    """Which round's PRM rewarded a round's RL (logs written before the option: always its own)."""
    k = row.get("reward_prm_round", row["round"])
    return f"round {k}" + ("" if k == row["round"] else f" (round {row['round']}'s was rejected)")


def _flywheel_runs(runs: FlywheelRuns, logs: Logs) -> list[str]:
    pooled = last_with(logs[runs.pooled], "rounds")
    rows = [["start", num(pooled["rounds"][0].get("policy_acc_before")), "", "", "", "",
             num(pooled["rounds"][0].get("steps_before"), 2)]]
    for r in pooled["rounds"]:
        per_seed = "; ".join(with_ci(v[0], v[1], signed=True) for v in r.get("f1_fresh_minus_stale_per_seed") or [])
        rows.append([r["round"], with_ci(r.get("policy_acc"), r.get("policy_acc_ci")), num(r.get("step_err")),
                     f"{num(r.get('prm_f1_fresh'))} / {num(r.get('prm_f1_stale'))}", per_seed or MISSING,
                     num(r.get("rollouts"), 0), num(r.get("steps_per_completion"), 2)])
    single = with_ci(pooled.get("single_run_policy_acc"), pooled.get("single_run_policy_acc_ci"))
    out = [f"### `{runs.pooled}`", "", f"{runs.note[0].upper()}{runs.note[1:]}.", "", "```bash", runs.command,
           "```", "", "#### Pooled over seeds", "",
           table(["round", "policy acc [95% CI]", "step error", "PRM F1 fresh / stale", "fresh - stale, per seed",
                  "rollouts", "steps / completion"], rows), "",
           f"One long RL run with the same steps: {single}; the flywheel's "
           f"final policy minus it, paired per problem: "
           f"{with_ci(pooled.get('flywheel_minus_single'), pooled.get('flywheel_minus_single_ci'), signed=True)}.", ""]
    for name in runs.seeds:
        if name not in logs:
            continue
        run = last_with(logs[name], "rounds")
        out += [f"#### Seed {run.get('seed')}", "",
                table(["round", "policy acc before -> after", "step error", "PRM F1 fresh / stale", "fresh - stale",
                       "RL rewarded by the PRM of", "rollouts", "steps / completion", "characters"],
                      [[r["round"], f"{num(r.get('policy_acc_before'))} -> "
                        f"{with_ci(r.get('policy_acc'), r.get('policy_acc_ci'))}", num(r.get("step_err")),
                        f"{num(r.get('prm_f1_fresh'))} / {num(r.get('prm_f1_stale'))}",
                        with_ci(r.get("f1_fresh_minus_stale"), r.get("f1_fresh_minus_stale_ci"), signed=True),
                        _reward_prm(r), num(r.get("rollouts"), 0), num(r.get("steps_per_completion"), 2),
                        num(r.get("chars_per_completion"), 0)] for r in run["rounds"]]), "",
                f"Long run: {with_ci(run.get('single_run_policy_acc'), run.get('single_run_policy_acc_ci'))}; "
                f"flywheel minus long run: "
                f"{with_ci(run.get('flywheel_minus_single'), run.get('flywheel_minus_single_ci'), signed=True)}.", ""]
    return [*out, f"![{runs.image}](img/{runs.image})", ""]


def _flywheel(logs: Logs) -> str:
    return "\n".join(line for runs in FLYWHEEL_RUNS if runs.pooled in logs for line in _flywheel_runs(runs, logs))


def _search_set(summary: dict[str, Any], rows_of_set: list[dict[str, Any]], solution_tokens: Any) -> list[str]:
    """The accuracy-by-budget table of one problem set (older logs: the only set), and its paired differences."""
    methods = list(dict.fromkeys(m["method"] for m in rows_of_set))
    by = {(m["budget"], m["method"]): m for m in rows_of_set}
    budgets = [b for b in summary["budgets"] if any((b, meth) in by for meth in methods)]
    prm_read = any("prm_tokens" in m for m in rows_of_set)
    rows = []
    for budget in budgets:
        row = [num(budget, 0)]
        for method in methods:
            m = by.get((budget, method))
            tokens = m and m.get("generated_tokens", m.get("mean_generated_tokens"))
            read = f", PRM {num(m.get('prm_tokens'), 0)}" if m and prm_read else ""
            row.append(MISSING if m is None else
                       f"{with_ci(m['accuracy'], m.get('accuracy_ci'), 2)}, "
                       f"{num(tokens, 0)} tok{read} (n={m.get('n')}, m={m.get('m')})")
        rows.append(row)
    best = {b: max(methods, key=lambda meth, b=b: by.get((b, meth), {}).get("accuracy", -1)) for b in budgets}
    out = [f"Pilot solution length {num(solution_tokens, 0)} tokens.", "",
           table(["budget (tokens / problem)", *methods], rows), "",
           table(["budget", "most accurate method"], [[num(b, 0), f"`{m}`"] for b, m in best.items()])]
    for key, baseline in (("vs_majority", "majority vote"), ("vs_best_of_n", "best-of-N")):
        diffs = [d for d in summary.get(key) or [] if d.get("set") == rows_of_set[0].get("set")]
        if diffs:
            out += ["", f"Paired difference from {baseline} on the same problems [95% CI]:", "",
                    table(["budget", "method", "difference"],
                          [[num(d.get("budget"), 0), f"`{d.get('method')}`",
                            with_ci(d.get("diff"), d.get("diff_ci"), 2, signed=True)] for d in diffs])]
    return out


def _on_off(flag: Any) -> str:
    return "not recorded (the log predates it: every candidate rescored in full)" if flag is None else (
        "on" if flag else "off")


def _search_validation(objects: list[dict[str, Any]]) -> list[str]:
    """The validation runs (problem seed 1): each (aggregation, m)'s accuracy per method, and what was chosen."""
    runs = [o for o in objects if "methods" in o]
    methods = list(dict.fromkeys(m["method"] for o in runs for m in o["methods"]))
    rows = []
    for o in runs:
        widths = {m.get("m") for m in o["methods"] if m["method"] in ("beam_search", "dvts")}
        acc = {meth: [m["accuracy"] for m in o["methods"] if m["method"] == meth] for meth in methods}
        rows.append([f"`{o.get('aggregation')}`", ", ".join(str(w) for w in sorted(widths)),
                     *[num(sum(a) / len(a)) if a else MISSING for a in acc.values()]])
    chosen = [f"{c.get('choose')}: `{c.get('chosen')}`" for c in objects if "chosen" in c]
    first = runs[0] if runs else {}
    return [f"Validation: {num(first.get('problems'), 0)} problems of problem seed {first.get('problem_seed')} "
            f"(never the test problems), seeds {first.get('seeds')}, budgets {first.get('budgets')}; each cell the "
            f"mean accuracy over the budgets. Aggregation is chosen first on every PRM method, then `m` on beam "
            f"search and DVTS.", "",
            table(["aggregation", "m (trees)", *methods], rows), "",
            "Chosen: " + ("; ".join(chosen) if chosen else MISSING) + "."]


# The test runs, newest first: 200 problems per set with the shipped PRM; the earlier 24-problem runs with the
# truth- and OmegaPRM-trained PRMs of benchmarks/prm_quality.py.
SEARCH_LOGS = ("search_prm.log", "search_prm_24.log")


def _search(logs: Logs) -> str:
    out = []
    if "search_validation.log" in logs:
        out += ["### Aggregation and beam width, chosen on validation", "",
                *_search_validation(logs["search_validation.log"]), ""]
    runs = [(log, o) for log in SEARCH_LOGS for o in logs.get(log, []) if "methods" in o]
    for log, summary in runs:
        prm = Path(str(summary.get("prm"))).name
        tokens = summary.get("solution_tokens")
        for name in dict.fromkeys(m.get("set") for m in summary["methods"]):
            rows_of_set = [m for m in summary["methods"] if m.get("set") == name]
            ops = (summary.get("sets") or {}).get(name)
            out += [f"### PRM `{prm}`, set `{name}`" + (f" (operations {ops})" if ops else "") + f", `{log}`", "",
                    f"{num(summary.get('problems'), 0)} test problems, seeds {summary.get('seeds')}, aggregation "
                    f"`{summary.get('aggregation')}`, prefix cache {_on_off(summary.get('prefix_cache'))}, "
                    f"{num(summary.get('wall_s'), 0)} s.", "",
                    *_search_set(summary, rows_of_set, tokens.get(name) if isinstance(tokens, dict) else tokens), ""]
    return "\n".join(out)


def _judge(logs: Logs) -> str:
    rows = []
    for name, objects in logs.items():
        if not name.endswith(".log"):
            continue
        o = last_with(objects, "coverage")
        rows.append([f"`{name}`", o.get("model"), num(o.get("k"), 0), num(o.get("solutions"), 0),
                     with_ci(o.get("coverage"), o.get("coverage_ci")),
                     with_ci(o.get("first_error_acc"), o.get("first_error_acc_ci")),
                     with_ci(o.get("processbench_f1"), o.get("processbench_f1_ci")),
                     with_ci(o.get("tokens_per_step"), o.get("tokens_per_step_ci"), 1),
                     with_ci(o.get("consensus_f1"), o.get("consensus_f1_ci"))])
    out = [table(["log", "model", "votes k", "held-out solutions", "coverage", "first-error acc", "ProcessBench F1",
                  "tokens / step", "consensus F1 (with SymPy)"], rows)]
    card = logs.get("judge_train_card.json")
    if card:
        c = card[0]
        out += ["", "### The shipped judge's training card", "",
                table(["train solutions", "held-out solutions", "train seconds", "weights digest"],
                      [[num(c.get("train_solutions"), 0), num(c.get("eval_solutions"), 0), num(c.get("train_s"), 0),
                        f"`{str(c.get('digest'))[:12]}`"]]), "",
                table(["held-out measure", "value"], [[k, num(v) if not isinstance(v, list) else with_ci(*v)]
                                                     for k, v in (c.get("eval") or {}).items()])]
    return "\n".join(out)


def _processbench(logs: Logs) -> str:
    (objects,) = logs.values()
    summary = last_with(objects, "labelers")
    rows = [[r["method"], r["split"], r["part"], num(r.get("rows"), 0), "yes" if r.get("uses_reference") else "no",
             num(r.get("error_acc")), num(r.get("correct_acc")), with_ci(r.get("f1"), r.get("f1_ci")),
             num(r.get("step_precision")), num(r.get("step_recall")), num(r.get("rollouts_per_solution"), 1),
             num(r.get("seconds_per_solution"), 2)]
            for r in sorted(summary["labelers"], key=lambda r: (r["split"], r["part"] != "report", -(r["f1"] or 0)))]
    out = [table(["method", "split", "rows", "n", "reads the gold answer", "error acc", "correct acc", "F1 [95% CI]",
                  "step precision", "step recall", "rollouts / solution", "seconds / solution"], rows)]
    prms = summary.get("prms") or []
    if prms:
        out += ["", "### PRMs (problem and steps only)", "",
                table(["PRM", "split", "rows", "threshold", "threshold from", "error acc", "correct acc",
                       "F1 [95% CI]"],
                      [[p["prm"], p["split"], num(p.get("rows"), 0), num(p.get("threshold")), p.get("threshold_from"),
                        num(p.get("error_acc")), num(p.get("correct_acc")), with_ci(p.get("f1"), p.get("f1_ci"))]
                       for p in prms])]
    return "\n".join(out)


def _scalars(objects: list[dict[str, Any]], key: str) -> str:
    summary = last_with(objects, key)
    rows = [[f"`{k}`", num(v, 3) if isinstance(v, float) else v] for k, v in summary.items()
            if isinstance(v, int | float | str) and not isinstance(v, bool)]
    return table(["key", "value"], rows)


def _incremental(objects: list[dict[str, Any]]) -> str:
    """Full rescoring against the prefix cache in one beam search, per depth, and the run's headline ratios."""
    summary = last_with(objects, "search_by_depth")
    rows = []
    for d in summary["search_by_depth"]:
        full, inc = d.get("full_prm_tokens"), d.get("incremental_prm_tokens")
        wall_full, wall_inc = d.get("full_wall_s"), d.get("incremental_wall_s")
        rows.append([num(d.get("depth"), 0), num(full, 0), num(inc, 0),
                     num(full / inc, 1) if full and inc else MISSING, num(wall_full, 2), num(wall_inc, 2),
                     num(wall_full / wall_inc, 1) if wall_full and wall_inc else MISSING,
                     "yes" if d.get("same_picks") else "no", num(d.get("max_abs_score_diff"), 6)])
    width = summary.get("search_width") or [MISSING, MISSING]
    return "\n".join([
        f"Beam search of {width[0]} beams x {width[1]} expansions over {num(summary.get('search_problems'), 0)} "
        f"problems at once, PRM `{Path(str(summary.get('search_prm'))).name}`, {summary.get('device')}, "
        f"{summary.get('threads')} torch thread(s), {summary.get('cpus')} CPUs, load average "
        f"{summary.get('load_average')}, fastest of {summary.get('repeats')} interleaved runs.", "",
        table(["depth (steps)", "PRM tokens, full", "PRM tokens, prefix cache", "ratio", "wall s, full",
               "wall s, prefix cache", "speedup", "same picks", "largest score difference"], rows), "",
        table(["headline (the 8-step-deep search)", "value"],
              [["`incremental_prm_tokens_ratio` (full / prefix-cache PRM tokens)",
                num(summary.get("incremental_prm_tokens_ratio"), 2)],
               ["`incremental_wall_speedup` (full / prefix-cache wall time)",
                num(summary.get("incremental_wall_speedup"), 2)]])])


def _scoring(logs: Logs) -> str:
    out = ["### Engines", "", _scalars(logs["scoring.log"], "hf_steps_per_s_batched")] if "scoring.log" in logs else []
    if "scoring_incremental.log" in logs:
        out += ["", "### Search: full rescoring against the prefix cache (`prm.scoring.IncrementalScorer`)", "",
                _incremental(logs["scoring_incremental.log"])]
    return "\n".join(out)


def _reward_server(logs: Logs) -> str:
    objects = logs["reward_server.log"]
    stages = [o for o in objects if "stage" in o and "throughput_rps" in o]
    out = [table(["stage", "clients", "hostile clients", "requests", "errors", "req/s", "p50 ms", "p99 ms",
                  "mean batch"],
                 [[o["stage"], num(o.get("clients"), 0), num(o.get("hostile_clients"), 0), num(o.get("requests"), 0),
                   num(o.get("errors"), 0), num(o.get("throughput_rps"), 1), num(o.get("p50_ms"), 1),
                   num(o.get("p99_ms"), 1), num(o.get("mean_batch"), 1)] for o in stages]),
           "", "Summary object:", "", _scalars(objects, "speedup")]
    return "\n".join(out)


def _extraction(logs: Logs) -> str:
    summary = last_with(logs["extraction.log"], "sets")
    rows = [[f"`{name}`", num(s["new"].get("n"), 0),
             f"{num(s['old'].get('extracted'))} / {num(s['new'].get('extracted'))} / "
             f"{num(s['new_last_number'].get('extracted'))}",
             f"{num(s['old'].get('correct'))} / {num(s['new'].get('correct'))} / "
             f"{num(s['new_last_number'].get('correct'))}"] for name, s in summary["sets"].items()]
    return "\n".join([f"Model `{summary.get('model')}` at temperature {summary.get('temperature')}; the old extractor "
                      f"is commit `{summary.get('old_commit')}`.", "",
                      table(["texts", "n", "extracted: old / new / last_number", "correct: old / new / last_number"],
                            rows)])


def _mc(metric: dict[str, Any], signed: bool = False) -> str:
    """A ``{"value", "ci"}`` (or ``{"delta", "ci"}``) metric of benchmarks/uncertainty.py's log."""
    return with_ci(metric.get("value", metric.get("delta")), metric.get("ci"), signed=signed)


def _uncertainty(logs: Logs) -> str:
    result = last_with(logs["uncertainty.log"], "estimates")
    shares = list(next(m for m in result["estimates"].values() if isinstance(m, dict))["caught"])
    rows, notes = [], []
    for name, m in result["estimates"].items():
        if not isinstance(m, dict):
            notes.append(f"`{name}`: {m}.")
            continue
        rows.append([f"`{name}`", _mc(m["first_error_acc"]), _mc(m["auroc"]), _mc(m["trusted_share"]),
                     _mc(m["mistakes_among_trusted"]), *[_mc(m["caught"][s]) for s in shares],
                     *[_mc(m["left_error"][s]) for s in shares]])
    header = ["estimate", "first-error accuracy", "ROC-AUC for its mistakes", "trusted (ActPRM rule)",
              "mistakes among trusted", *[f"mistakes caught, {float(s):.0%} labeled" for s in shares],
              *[f"mistakes left, {float(s):.0%} labeled" for s in shares]]
    stats = list(next(iter(result["differences"].values())))
    diffs = [[f"`{pair}`", *[_mc(d[stat], signed=True) for stat in stats]] for pair, d in result["differences"].items()]
    counts = result.get("counts", {})
    return "\n".join([
        f"{num(counts.get('eval_solutions'), 0)} held-out solutions ({num(counts.get('fit_solutions'), 0)} in the fit "
        f"halves), seeds {', '.join(str(r['seed']) for r in result.get('per_seed', []))}; PRM "
        f"`{Path(str(result['config'].get('prm'))).name}`.", "", table(header, rows), "", *notes, "",
        "Differences, paired per solution:", "", table(["pair", *stats], diffs), ""])


STUDIES: tuple[Study, ...] = (
    Study("label-sources-floor", "Label sources with the default (floored) recipe, 300 problems per length",
          ("prm_per_level_300_floor.log",),
          "python benchmarks/prm_quality.py --per-level 300 --methods truth mc omegaprm --seeds 0 1 2 "
          "--implicit-steps 0",
          "Today's default LM-head recipe (each token read against a reference floored at 0.05): one PRM per label "
          "source and seed on the shipped policy's samples; every figure the mean over 3 seeds with a 95% bootstrap "
          "interval over test problems; paired columns are each scorer's difference from the truth-trained PRM; "
          "the last column is the least-detected off-policy perturbation kind.",
          _comparison, ("prm300floor_best_of_n_in_distribution.png", "prm300floor_best_of_n_easy_to_hard.png")),
    Study("label-sources", "Label sources at 800 problems per length (the default size)",
          ("prm_per_level_800.log",), "python benchmarks/prm_quality.py --methods truth mc omegaprm --seeds 0 1 2",
          "One LM-head PRM per label source and seed, on the shipped policy's samples of 4-8-step word problems; "
          "two test sets (in distribution, easy-to-hard); every figure the mean over seeds with a 95% bootstrap "
          "interval over test problems; paired columns are each scorer's difference from the truth-trained PRM.",
          _comparison, ("prm800_best_of_n_in_distribution.png", "prm800_best_of_n_easy_to_hard.png")),
    Study("label-sources-300", "Label sources at 300 problems per length", ("prm.log",),
          "python benchmarks/prm_quality.py --per-level 300 --methods truth mc omegaprm --seeds 0 1 2",
          "The same comparison at a smaller size, without paired columns.", _comparison,
          ("prm_best_of_n_in_distribution.png", "prm_best_of_n_easy_to_hard.png")),
    Study("learning-curves", "Learning curves: the truth-trained PRM against data and steps",
          ("prm_curves.log", "prm_curves_harness.log"),
          "python benchmarks/prm_curves.py --workdir W --points 3000:3000 12000:1000 12000:3000",
          "Classification-head and LM-head PRMs trained on exact step truth at several sizes, beside the policy's "
          "log-likelihood and the outcome-trained implicit PRM, tested in distribution.", _curves,
          ("prm_curves.png",)),
    Study("off-policy", "Steps the policy would never write",
          ("prm_offpolicy_ablation.log", "prm_offpolicy_truth_seed0.log", "prm_offpolicy_omegaprm_seed0.log"),
          "python benchmarks/prm_offpolicy.py",
          "The off-policy perturbation suite: each wrong kind's detection (the perturbed step scored below the "
          "right one), recipes compared on validation, the chosen recipe on the test sets.", _offpolicy),
    Study("rl-arms", "RL reward arms (GRPO)", tuple(p.log for p in RL_POOLS),
          "python benchmarks/rl.py --prm arith-prm --arms A --seed S --out DIR/seedS; "
          "python benchmarks/rl_seeds.py DIR/seed0 DIR/seed1 DIR/seed2 --plot benchmarks/results/PICTURE.png",
          "GRPO on the shipped policy with the shipped (floored, truth-trained LM-head) PRM, one arm per reward with "
          "the same 100 steps; held-out accuracy before and after with 95% intervals over (seed, problem), the "
          "paired difference from outcome-only, per-step error, steps and characters per completion, flawed "
          "positives (the share of right answers with a step wrong by exact truth, before and after, and the paired "
          "difference from outcome-only; logs written before these counts lack the columns), the steps each arm "
          "took to reach outcome-only's final accuracy (held-out accuracy every 20 steps) and the hack mark (steps "
          "per completion moved more than 30% while held-out accuracy fell, `prm.rl.curve.hacked_at`). One section "
          "per pooled log, newest first, each with its own commands; an arm in several logs is shown from the "
          "newest.",
          _rl, tuple(p.image for p in RL_POOLS)),
    Study("flywheel", "The data flywheel", tuple(log for r in FLYWHEEL_RUNS for log in (r.pooled, *r.seeds)),
          "python benchmarks/flywheel.py --seed S; python benchmarks/flywheel_seeds.py (pooling)",
          "Rounds of sample, label, retrain the PRM (fresh vs stale F1 on each round's own held-out samples) and "
          "resume RL, against one long RL run with the same steps from round 0's PRM; 2 seeds, each drawing its own "
          "problems, pooled per (seed, held-out problem). One section per pooled log, newest first, each with its "
          "own commands.", _flywheel, tuple(r.image for r in FLYWHEEL_RUNS)),
    Study("search", "Test-time search", ("search_validation.log", *SEARCH_LOGS),
          "python benchmarks/search.py --prm DIR --problem-seed 1 --seeds 0 --budgets 240 960 --aggregation A --m M "
          "(validation); python benchmarks/search.py --prm DIR --seeds 0 1 2 --aggregation A --m M --sets S "
          "--budgets B1 ... B5 (test)",
          "Best-of-N, the PRM-weighted vote, majority vote, beam search and DVTS at equal generated-token budgets "
          "(about 2 to 32 samples' worth): in `search_prm.log` with the shipped PRM (`arith-prm`) on 200 test problems "
          "per set; in `search_prm_24.log` on 24 with LM-head PRMs trained on exact step truth and on OmegaPRM labels "
          "by benchmarks/prm_quality.py (300 problems per length, the floored default recipe, seed 0). "
          "Aggregation and beam width are chosen on validation problems; the test tables pool 3 seeds per problem: "
          "accuracy with a 95% bootstrap interval over problems, the tokens each method generated and ran through "
          "its PRM, and each method's paired difference from majority vote and from best-of-N.", _search,
          ("search_in_distribution.png", "search_harder.png", "search_truth_in_distribution.png",
           "search_truth_harder.png")),
    Study("processbench", "Every labeler and PRM against people (ProcessBench)", ("processbench.log",),
          "python benchmarks/processbench.py labelers; python benchmarks/processbench.py report --prm NAME=FOLDER ...",
          "ProcessBench's human first-error labels (GSM8K split: 400 rows; MATH split: 300 rows spread over the "
          "file) against each label method run through the pipeline's own paths, with SmolLM2-135M-Instruct "
          "completing every MC and OmegaPRM rollout, and against PRMs that see only problem and steps. Figures are "
          "`code/run_eval.py`'s (error accuracy, correct accuracy, their harmonic mean F1) as fractions, with a 95% "
          "bootstrap interval over problems. Part `report`: the rows no rule, threshold or method was chosen on "
          "(`prm.evaluation.choice_part`); part `all`: every row. Methods that read the gold answer or the "
          "reference solution are marked: the published PRM and critic figures read neither. A method's predicted "
          "first error is the one it states, else the first step it labels wrong, -1 when it labels every step "
          "right; a row where it leaves a step undecided before any wrong one is a miss (SymPy decides about a "
          "third of the steps, so on most all-right rows it makes no claim). A PRM predicts the first step scored "
          "below the threshold: the fixed 0.5, or one chosen on the other split; the PRM trained on the MATH "
          "split's labels is reported on GSM8K only.", _processbench),
    Study("judge", "The LLM judge", ("judge_base.log", "judge.log", "judge_finetuned.log", "judge_train_card.json"),
          "python benchmarks/judge.py --model smollm2-135m-instruct (zero-shot); python benchmarks/judge.py "
          "(the shipped judge)",
          "The judge on held-out solutions with exact truth: coverage, first-error accuracy, ProcessBench F1 and "
          "tokens per step, zero-shot and fine-tuned.", _judge),
    Study("uncertainty", "Uncertainty estimates for active labeling", ("uncertainty.log",),
          "python benchmarks/uncertainty.py",
          "Which estimate finds the PRM's mistakes, as `active` uses it: the shipped policy's samples of 4-8-operation "
          "word problems (problem seeds apart from every training draw), scored by the shipped PRM and labeled by "
          "exact truth; per seed the problems are split in half, the fit half standing for the labels a seed set "
          "bought. A solution is an estimate's mistake when its first predicted error (the first step below 0.5) "
          "is not the true one. `band`: the PRM's own probabilities; `calibrated`: Platt-scaled on the fit half "
          "(`active`'s default); `ensemble`: ActPRM's 32 heads on the frozen PRM, fit on the fit half. Then, on the "
          "other half: first-error accuracy, ROC-AUC of the unsure score for the estimate's own mistakes, ActPRM's "
          "trust rule at its thresholds (0.1 / 0.9, spread 0.01), and with the most unsure share of solutions "
          "labeled, the share of mistakes caught and the mistake rate among the rest; 95% intervals over (seed, "
          "problem).", _uncertainty),
    Study("scoring", "PRM scoring speed", ("scoring.log", "scoring_incremental.log"),
          "python benchmarks/scoring.py; python benchmarks/scoring.py --workloads search --prm DIR --repeats 3",
          "Transformers and vLLM scoring the same PRM, batched and one solution at a time, with their parity and "
          "the share of a measured matmul peak; and a step-level beam search scored by full rescoring and by the "
          "prefix cache on the same trees at fixed depths: the tokens each ran through the PRM, wall time, whether "
          "both picked the same solutions and their largest score difference.", _scoring),
    Study("reward-server", "Reward server under load", ("reward_server.log",), "python benchmarks/reward_server.py",
          "Concurrent OpenRLHF-style clients against one at a time, and beside hostile clients.", _reward_server),
    Study("extraction", "Answer extraction", ("extraction.log",), "python benchmarks/extraction.py",
          "The answer extractor on gold solutions and on SmolLM2 samples, old and new.", _extraction),
)


def render_study(study: Study, results_dir: Path, repo: Path) -> str:
    """The Markdown of one results page, read from the logs in ``results_dir`` (``repo`` dates them)."""
    logs = {name: json_objects(results_dir / name) for name in study.logs if (results_dir / name).is_file()}
    missing = [name for name in study.logs if name not in logs]
    head = [f"# {study.title}", "", study.measures, "", "Generated from the committed logs when the site is built; "
            "rerun the command and commit its log to change this page.", "", "```bash", study.command, "```", "",
            table(["log", "commit", "date"],
                  [[f"`{p.path}`", f"`{p.commit}`", p.date] for p in
                   (provenance(repo, f"benchmarks/results/{name}") for name in logs)])]
    if missing:
        head += ["", "Not in this checkout: " + ", ".join(f"`{m}`" for m in missing) + "."]
    body = study.render(logs) if logs else "No log of this study is committed yet."
    images = [f"![{name}](img/{name})" for name in study.images  # those the body placed itself aside
              if (results_dir / name).is_file() and f"](img/{name})" not in body]
    return "\n".join([*head, "", "## Results", "", body, "", *images]).rstrip() + "\n"


def render_index(studies: tuple[Study, ...] = STUDIES) -> str:
    """The results section's index page."""
    rows = [[f"[{s.title}]({s.slug}.md)", ", ".join(f"`{log}`" for log in s.logs)] for s in studies]
    return "\n".join(["# Results", "", "Each page is generated from the benchmark logs committed under "
                      "`benchmarks/results/` when the site is built: the command, the commit and the date of each "
                      "log, then its tables. No number on these pages is typed by hand.", "",
                      table(["study", "logs"], rows)]) + "\n"


def render_policy_card(card_path: Path, repo: Path) -> str:
    """The shipped policy's card as a page: its held-out table, training steps and stop rule, from the card."""
    import json

    card = json.loads(card_path.read_text(encoding="utf-8"))
    rel = card_path.relative_to(repo).as_posix() if card_path.is_relative_to(repo) else card_path.name
    p = provenance(repo, rel)
    config = card.get("config", {})
    return "\n".join([
        "# The shipped policy's card", "",
        f"Generated from `{rel}` (commit `{p.commit}`, {p.date}) when the site is built; `make policy` rebuilds the "
        "checkpoint and its card.", "",
        table(["parameters", "optimizer steps", "stopped by", "train seconds", "weights sha256"],
              [[num(card.get("num_parameters"), 0), num(card.get("train_steps"), 0), card.get("stopped_by", MISSING),
                num(card.get("train_seconds"), 0), f"`{str(card.get('weights_sha256'))[:12]}`"]]), "",
        f"## Held-out, {card.get('eval', {}).get('samples_per_problem', MISSING)} samples per problem at temperature "
        f"{card.get('eval', {}).get('temperature', MISSING)}", "", card.get("eval_markdown", "").strip(), "",
        "## Recipe", "", table(["field", "value"], [[f"`{k}`", f"`{v}`"] for k, v in config.items()]),
    ]) + "\n"


def render_prm_card(card_path: Path, repo: Path) -> str:
    """The shipped PRM's card as a page: its recipe and its validation/test figures beside the constant baseline."""
    import json

    from prm.training import figures_markdown

    card = json.loads(card_path.read_text(encoding="utf-8"))
    shipped = card.get("shipped", {})
    rel = card_path.relative_to(repo).as_posix() if card_path.is_relative_to(repo) else card_path.name
    p = provenance(repo, rel)
    recipe = {k: v for k, v in shipped.get("recipe", {}).items() if k != "train"}
    train = shipped.get("recipe", {}).get("train", {})
    return "\n".join([
        "# The shipped PRM's card", "",
        f"Generated from `{rel}` (commit `{p.commit}`, {p.date}) when the site is built; `make prm` rebuilds the "
        "checkpoint and its card. The demo checks its weight digests and evaluates it on each partition; the GRPO "
        "smoke run uses it as the reward.", "",
        table(["base model", "head", "label method", "optimizer steps", "weights sha256"],
              [[card.get("base_model", MISSING), card.get("head", MISSING), card.get("label_method", MISSING),
                num(card.get("global_step"), 0),
                f"`{str(shipped.get('score_digests', {}).get('files', {}).get('model.safetensors'))[:12]}`"]]), "",
        f"## Held-out test sets (best-of-{shipped.get('bon_n', MISSING)}, 95% intervals over problems)", "",
        figures_markdown(shipped.get("figures", {})), "",
        "## Data recipe", "", table(["field", "value"], [[f"`{k}`", f"`{v}`"] for k, v in recipe.items()]), "",
        "## Training config", "",
        table(["field", "value"], [[f"`{k}`", f"`{v}`"] for k, v in train.items()]),
    ]) + "\n"
