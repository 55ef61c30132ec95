"""One results page per study, generated from the committed logs in ``benchmarks/results/`` when the site builds.

Each :class:`Study` names its logs, the command that wrote them and a renderer that turns the logs' JSON into
Markdown tables. The prose here says what a table measures, never what it found: the figures come from the logs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docs.hooks.results_io import MISSING, json_objects, last_with, num, provenance, table, with_ci

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
              "process": "process (per-token)", "prm_min_prof": "PRM min-form + outcome, PROF filter"}


def _arms_table(arms: dict[str, Any], pooled: bool) -> str:
    header = ["arm", "accuracy before -> after", "gain [95% CI]"]
    header += ["gain per seed", "vs outcome [95% CI]"] if pooled else []
    header += ["per-step error", "steps / completion", "characters"]
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
        rows.append(row)
    return table(header, rows)


def _rl(logs: Logs) -> str:
    out = []
    titles = {"rl_seeds.log": "Pooled over seeds 0 and 1 (classification-head truth PRM)",
              "rl.log": "Seed 0 (classification-head truth PRM)",
              "rl_seed1.log": "Seed 1 (classification-head truth PRM)",
              "rl_lm_truth.log": "Seed 0, LM-head truth PRM", "rl_lm_truth_seed1.log": "Seed 1, LM-head truth PRM",
              "rl_lm_omegaprm.log": "Seed 0, LM-head OmegaPRM PRM"}
    for name, objects in logs.items():
        summary = last_with(objects, "arms")
        out += [f"### {titles.get(name, name)}", "", f"Log: `benchmarks/results/{name}`.", ""]
        if "steps_per_arm" in summary:
            out += [f"GRPO steps per arm: {num(summary['steps_per_arm'], 0)}.", ""]
        out += [_arms_table(summary["arms"], pooled=name == "rl_seeds.log"), ""]
    return "\n".join(out)


def _flywheel(logs: Logs) -> str:
    pooled = last_with(logs["flywheel_seeds.log"], "rounds")
    rows = [["start", num(pooled["rounds"][0].get("policy_acc_before")), "", "", "", "",
             num(pooled["rounds"][0].get("steps_before"), 2)]]
    for r in pooled["rounds"]:
        per_seed = "; ".join(with_ci(v[0], v[1], signed=True) for v in r.get("f1_fresh_minus_stale_per_seed") or [])
        rows.append([r["round"], with_ci(r.get("policy_acc"), r.get("policy_acc_ci")), num(r.get("step_err")),
                     f"{num(r.get('prm_f1_fresh'))} / {num(r.get('prm_f1_stale'))}", per_seed or MISSING,
                     num(r.get("rollouts"), 0), num(r.get("steps_per_completion"), 2)])
    single = with_ci(pooled.get("single_run_policy_acc"), pooled.get("single_run_policy_acc_ci"))
    out = ["### Pooled over seeds", "",
           table(["round", "policy acc [95% CI]", "step error", "PRM F1 fresh / stale", "fresh - stale, per seed",
                  "rollouts", "steps / completion"], rows), "",
           f"One long RL run with the same steps: {single}; the flywheel's "
           f"final policy minus it, paired per problem: "
           f"{with_ci(pooled.get('flywheel_minus_single'), pooled.get('flywheel_minus_single_ci'), signed=True)}.", ""]
    for name in ("flywheel_seed0.log", "flywheel_seed1.log"):
        if name not in logs:
            continue
        run = last_with(logs[name], "rounds")
        out += [f"### Seed {run.get('seed')}", "",
                table(["round", "policy acc before -> after", "step error", "PRM F1 fresh / stale", "fresh - stale",
                       "rollouts", "steps / completion", "characters"],
                      [[r["round"], f"{num(r.get('policy_acc_before'))} -> "
                        f"{with_ci(r.get('policy_acc'), r.get('policy_acc_ci'))}", num(r.get("step_err")),
                        f"{num(r.get('prm_f1_fresh'))} / {num(r.get('prm_f1_stale'))}",
                        with_ci(r.get("f1_fresh_minus_stale"), r.get("f1_fresh_minus_stale_ci"), signed=True),
                        num(r.get("rollouts"), 0), num(r.get("steps_per_completion"), 2),
                        num(r.get("chars_per_completion"), 0)] for r in run["rounds"]]), "",
                f"Long run: {with_ci(run.get('single_run_policy_acc'), run.get('single_run_policy_acc_ci'))}; "
                f"flywheel minus long run: "
                f"{with_ci(run.get('flywheel_minus_single'), run.get('flywheel_minus_single_ci'), signed=True)}.", ""]
    return "\n".join(out)


def _search(logs: Logs) -> str:
    summary = last_with(logs["search.log"], "methods")
    methods = list(dict.fromkeys(m["method"] for m in summary["methods"]))
    by = {(m["budget"], m["method"]): m for m in summary["methods"]}
    rows = []
    for budget in summary["budgets"]:
        row = [num(budget, 0)]
        for method in methods:
            m = by.get((budget, method))
            row.append(MISSING if m is None else
                       f"{with_ci(m['accuracy'], m.get('accuracy_ci'), 2)}, "
                       f"{num(m.get('mean_generated_tokens'), 0)} tok (n={m.get('n')}, m={m.get('m')})")
        rows.append(row)
    best = {b: max(methods, key=lambda meth, b=b: by.get((b, meth), {}).get("accuracy", -1))
            for b in summary["budgets"]}
    return "\n".join([
        f"{num(summary.get('problems'), 0)} problems, seeds {summary.get('seeds')}, aggregation "
        f"`{summary.get('aggregation')}`, pilot solution length {num(summary.get('solution_tokens'), 0)} tokens.", "",
        table(["budget (tokens / problem)", *methods], rows), "",
        table(["budget", "most accurate method"], [[num(b, 0), f"`{m}`"] for b, m in best.items()])])


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


def _scalars(objects: list[dict[str, Any]], key: str) -> str:
    summary = last_with(objects, key)
    rows = [[f"`{k}`", num(v, 3) if isinstance(v, float) else v] for k, v in summary.items()
            if isinstance(v, int | float | str) and not isinstance(v, bool)]
    return table(["key", "value"], rows)


def _scoring(logs: Logs) -> str:
    return _scalars(logs["scoring.log"], "hf_steps_per_s_batched")


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


STUDIES: tuple[Study, ...] = (
    Study("label-sources", "Label sources at 800 problems per length (the default size)",
          ("prm_per_level_800.log",), "python benchmarks/prm.py --methods truth mc omegaprm --seeds 0 1 2",
          "One LM-head PRM per label source and seed, on the shipped policy's samples of 4-8-step word problems; "
          "two test sets (in distribution, easy-to-hard); every figure the mean over seeds with a 95% bootstrap "
          "interval over test problems; paired columns are each scorer's difference from the truth-trained PRM.",
          _comparison, ("prm800_best_of_n_in_distribution.png", "prm800_best_of_n_easy_to_hard.png")),
    Study("label-sources-300", "Label sources at 300 problems per length", ("prm.log",),
          "python benchmarks/prm.py --per-level 300 --methods truth mc omegaprm --seeds 0 1 2",
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
    Study("rl-arms", "RL reward arms (GRPO)",
          ("rl_seeds.log", "rl.log", "rl_seed1.log", "rl_lm_truth.log", "rl_lm_truth_seed1.log",
           "rl_lm_omegaprm.log"),
          "python benchmarks/rl.py; python benchmarks/rl_seeds.py (pooling)",
          "GRPO on the shipped policy, one arm per reward with the same steps; held-out accuracy before and after "
          "with 95% intervals over held-out problems, per-step error, steps and characters per completion.", _rl),
    Study("flywheel", "The data flywheel", ("flywheel_seeds.log", "flywheel_seed0.log", "flywheel_seed1.log"),
          "python benchmarks/flywheel.py --seed S; python benchmarks/flywheel_seeds.py (pooling)",
          "Rounds of sample, label, retrain the PRM (fresh vs stale F1) and resume RL, against one long RL run "
          "with the same steps.", _flywheel, ("flywheel.png",)),
    Study("search", "Test-time search", ("search.log",),
          "python benchmarks/search.py --problems 24 --budgets 480 960 1920 --seeds 0 1 "
          "--plot benchmarks/results/search.png",
          "Best-of-N, majority vote, beam search and DVTS at equal generated-token budgets; accuracy with a 95% "
          "bootstrap interval over problems and the tokens each method really spent.", _search, ("search.png",)),
    Study("judge", "The LLM judge", ("judge_base.log", "judge.log", "judge_finetuned.log", "judge_train_card.json"),
          "python benchmarks/judge.py --model smollm2-135m-instruct (zero-shot); python benchmarks/judge.py "
          "(the shipped judge)",
          "The judge on held-out solutions with exact truth: coverage, first-error accuracy, ProcessBench F1 and "
          "tokens per step, zero-shot and fine-tuned.", _judge),
    Study("scoring", "PRM scoring speed", ("scoring.log",), "python benchmarks/scoring.py",
          "Transformers and vLLM scoring the same PRM, batched and one solution at a time, with their parity and "
          "the share of a measured matmul peak.", _scoring),
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
    images = [f"![{name}](img/{name})" for name in study.images if (results_dir / name).is_file()]
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

    from prm.training.ship import figures_markdown

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
                f"`{str(shipped.get('weights_sha256', {}).get('model.safetensors'))[:12]}`"]]), "",
        f"## Held-out test sets (best-of-{shipped.get('bon_n', MISSING)}, 95% intervals over problems)", "",
        figures_markdown(shipped.get("figures", {})), "",
        "## Data recipe", "", table(["field", "value"], [[f"`{k}`", f"`{v}`"] for k, v in recipe.items()]), "",
        "## Training config", "",
        table(["field", "value"], [[f"`{k}`", f"`{v}`"] for k, v in train.items()]),
    ]) + "\n"
