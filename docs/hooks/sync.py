"""The generated files and blocks that live in the repository, not only in the site: the asset-graph picture
(``docs/assets/asset-graph.svg``, from the Dagster definitions), README's headline results (from the committed logs),
the layer picture in README and on the asset-graph page (from pyproject's import-linter contracts) and the recipes'
measured costs on docs/recipes.md (from the committed run logs). ``make docs`` rewrites them; ``--check`` fails when
one is stale.

    python -m docs.hooks.sync --write
    python -m docs.hooks.sync --check
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from docs.hooks.blocks import Block
from docs.hooks.layers import layers_text
from docs.hooks.recipe_runs import costs_table, rates_table
from docs.hooks.results_io import json_objects, last_with, num, table, with_ci
from docs.hooks.results_pages import RL_POOLS, pooled_rl

REPO = Path(__file__).resolve().parents[2]
SVG = Path("docs/assets/asset-graph.svg")
RESULTS = Block("results", "benchmarks/results")
START, END = RESULTS.start, RESULTS.end
LAYERS = Block("layers", "the import-linter contracts in pyproject.toml")
COSTS = Block("recipe-costs", "the run logs in benchmarks/results")
ANSWERS = Block("smollm2-answers", "benchmarks/results/recipe_smollm2_gsm8k.log")
METHOD_TABLE = Block("label-methods", "warehouse/methods/table.py")
# Under the headline table: its jargon (floored, arms, DVTS, step sensitivity, perturbation kinds) is defined there.
GLOSSARY = ("The terms (floored recipe, arms, DVTS, step sensitivity, `flipped_operator`, ...): "
            "[glossary](docs/concepts/glossary.md).")
LOGS = "benchmarks/results"  # README links each figure to its log (the results pages exist only in the built site)
# The third steps of the off-policy example (benchmarks/prm_offpolicy.py's ZOE_THIRD), as its log names them.
ZOE_STEPS = {"right": "`11-6 = 5`", "slip": "`11-6 = 7`", "wrong operand": "`11-7 = 4`", "wild value": "`11-6 = 99`",
             "nonsense": "`hello world`"}
SHIPPED_CARD = Path("prm/shipped/arith-prm/prm_card.json")  # the shipped PRM's card (`make prm` writes it)


def headline(results: Path, card: Path | None = None) -> str:
    """README's small results table: one line per study, each figure read from its log, and the shipped PRM's line
    read from its card (``card``; default the repository's)."""
    rows = processbench_rows(results)
    comparison = last_with(json_objects(results / "prm_per_level_800.log"), "comparison")["comparison"]
    by = {(r["test"], r["method"]): r for r in comparison}
    truth, omega, mc = (by[("in_distribution", m)] for m in ("truth", "omegaprm", "mc"))
    rows.append(["PRM trained on exact step truth, in distribution (the earlier unfloored recipe, 800 per length)",
                 f"ProcessBench F1 {with_ci(truth['prm_f1'], truth['prm_f1_ci'])}, step sensitivity "
                 f"{with_ci(truth['step_sensitivity'], truth['step_sensitivity_ci'])}",
                 f"[`prm_per_level_800.log`]({LOGS}/prm_per_level_800.log)"])
    rows.append(["PRM trained on OmegaPRM labels (the same run)",
                 f"F1 {with_ci(omega['prm_f1'], omega['prm_f1_ci'])} with {num(omega['rollouts_per_step'], 2)} "
                 f"rollouts per step (MC: {num(mc['rollouts_per_step'], 2)})",
                 f"[`prm_per_level_800.log`]({LOGS}/prm_per_level_800.log)"])
    rows.append(["Best-of-8 with the truth-trained PRM, gain over majority vote (the same run)",
                 with_ci(truth["bon_gain"], truth["bon_gain_ci"], signed=True),
                 f"[`prm_per_level_800.log`]({LOGS}/prm_per_level_800.log)"])
    shipped_card = json_objects(card or REPO / SHIPPED_CARD)[0]
    shipped = shipped_card["shipped"]
    figures = shipped["figures"]["in_distribution"]["prm"]
    rows.append([f"The shipped PRM ({shipped_label(shipped_card)}), in distribution",
                 f"ProcessBench F1 {with_ci(figures['f1']['value'], figures['f1']['ci'])}, best-of-"
                 f"{shipped.get('bon_n', 'N')} gain over majority vote "
                 f"{with_ci(figures['bon_gain']['value'], figures['bon_gain']['ci'], signed=True)}",
                 f"[`prm_card.json`]({SHIPPED_CARD.as_posix()})"])
    floor = {(r["test"], r["method"]): r for r in last_with(
        json_objects(results / "prm_per_level_300_floor.log"), "comparison")["comparison"]}
    ft = floor[("in_distribution", "truth")]
    kind, worst = min(((k, v) for k, v in ft["perturbation"].items() if isinstance(v, dict) and "detection" in v),
                      key=lambda kv: kv[1]["detection"])
    rows.append([f"The default (floored) recipe on truth, {len(ft.get('seeds') or [])} seeds, 300 per length",
                 f"F1 {with_ci(ft['prm_f1'], ft['prm_f1_ci'])}, best-of-8 gain "
                 f"{with_ci(ft['bon_gain'], ft['bon_gain_ci'], signed=True)}, steps the policy would never write: "
                 f"least-detected kind `{kind}` {with_ci(worst['detection'], worst['detection_ci'])}",
                 f"[`prm_per_level_300_floor.log`]({LOGS}/prm_per_level_300_floor.log)"])
    zoe = next(o["zoe"] for o in json_objects(results / "prm_offpolicy_truth_seed0.log")
               if o.get("variant") == "floor05" and "zoe" in o)
    rows.append(["\"Zoe starts with 7 points...\" after `7-1 = 6`, `6+5 = 11`: the third step's score (floored, "
                 "seed 0)", ", ".join(f"{ZOE_STEPS.get(name, name)} {num(score)}" for name, score in zoe.items()),
                 f"[`prm_offpolicy_truth_seed0.log`]({LOGS}/prm_offpolicy_truth_seed0.log)"])
    rows += rl_rows(results)
    rows += search_rows(results)
    unc = last_with(json_objects(results / "uncertainty.log"), "estimates")
    left = unc["differences"]["calibrated-band"]["left_error_0.25"]
    rows.append(["`active`'s estimate: mistakes left among solutions not labeled when the most unsure 25% are, "
                 f"calibrated (default) {num(unc['estimates']['calibrated']['left_error']['0.25']['value'])} vs "
                 f"raw PRM {num(unc['estimates']['band']['left_error']['0.25']['value'])} (paired difference)",
                 with_ci(left["delta"], left["ci"], signed=True),
                 f"[`uncertainty.log`]({LOGS}/uncertainty.log)"])
    fly = last_with(json_objects(results / "flywheel_seeds.log"), "rounds")
    rows.append([f"Flywheel's final policy minus one long RL run (paired; RL arm `{fly_arm(results)}`, 2 seeds)",
                 with_ci(fly["flywheel_minus_single"], fly["flywheel_minus_single_ci"], signed=True),
                 f"[`flywheel_seeds.log`]({LOGS}/flywheel_seeds.log)"])
    return table(["study", "result [95% CI]", "log"], rows)


def fly_arm(results: Path) -> str:
    """The RL arm of the pooled flywheel runs (their seed logs record their config)."""
    seed0 = last_with(json_objects(results / "flywheel_seed0.log"), "rounds")
    return seed0["config"]["arm"]


SEARCH_METHODS = ("weighted_vote", "best_of_n", "beam_search", "dvts")  # each minus majority vote, in this order


def search_rows(results: Path) -> list[list[str]]:
    """One row per problem set of ``search_prm.log``: each PRM method minus majority vote (paired) at every budget."""
    rows = []
    for summary in json_objects(results / "search_prm.log"):
        if "methods" not in summary:
            continue
        for name in dict.fromkeys(m.get("set") for m in summary["methods"]):
            diffs = {(d["method"], d["budget"]): d for d in summary["vs_majority"] if d.get("set") == name}
            cells = [f"{num(b, 0)}: " + " / ".join(with_ci(diffs[m, b]["diff"], diffs[m, b]["diff_ci"], 3, signed=True)
                                                  for m in SEARCH_METHODS if (m, b) in diffs)
                     for b in summary["budgets"]]
            rows.append([f"Test-time search with the shipped PRM, set `{name}` ({summary['problems']} problems x "
                         f"{len(summary['seeds'])} seeds): PRM-weighted vote / best-of-N / beam search / DVTS minus "
                         "majority vote (paired) at each budget (generated tokens per problem)", "; ".join(cells),
                         f"[`search_prm.log`]({LOGS}/search_prm.log)"])
    return rows


def rl_rows(results: Path) -> list[list[str]]:
    """One row per pooled RL log, newest first: outcome-only's held-out accuracy (from the newest log holding it),
    each arm no newer log holds minus `outcome` of the same runs, and where the log counts them the flawed positives
    (right answers with a step wrong by exact truth): `outcome`'s share and each arm's minus it."""
    rows = []
    for pool, arms, newer in pooled_rl({p.log: json_objects(results / p.log) for p in RL_POOLS}):
        others = [a for a in arms if a not in newer and "vs_outcome" in arms[a]]
        if not others:
            continue
        outcome = arms["outcome"]
        first = "outcome" not in newer
        what = (f"GRPO with the shipped PRM, held-out accuracy after 100 steps: `outcome` only ({outcome['seeds']} "
                "seeds), and each arm minus `outcome` (paired): " if first else
                "Earlier GRPO runs, the same setup: each arm minus that log's own `outcome` (paired): ")
        what += ", ".join(f"`{a}` ({arms[a]['vs_outcome_seeds']} seeds)" for a in others)
        what += f" ({pool.note})" if pool.note else ""
        parts = [with_ci(outcome["acc_after"], outcome["acc_after_ci"])] if first else []
        parts.append(", ".join(with_ci(arms[a]["vs_outcome"], arms[a]["vs_outcome_ci"], signed=True) for a in others))
        flawed = [a for a in others if arms[a].get("flawed_vs_outcome") is not None]
        if flawed:
            what += ("; flawed positives (share of right answers with a step wrong by exact truth): `outcome`'s, then "
                     "each arm's minus it (paired): " + ", ".join(f"`{a}`" for a in flawed))
            parts.append(f"flawed {with_ci(outcome['flawed_after'], outcome['flawed_after_ci'])}; "
                         + ", ".join(with_ci(arms[a]["flawed_vs_outcome"], arms[a]["flawed_vs_outcome_ci"],
                                             signed=True) for a in flawed))
        rows.append([what, "; ".join(parts), f"[`{pool.log}`]({LOGS}/{pool.log})"])
    return rows


def processbench_rows(results: Path) -> list[list[str]]:
    """The best label method and the best PRM per ProcessBench split, on the rows no choice was made on (labelers)
    and at the fixed threshold (PRMs): people's first-error labels, not this project's own truth."""
    summary = last_with(json_objects(results / "processbench.log"), "labelers")
    rows = []
    for split in dict.fromkeys(r["split"] for r in summary["labelers"]):
        part = [r for r in summary["labelers"] if r["split"] == split and r["part"] == "report" and r["f1"] is not None]
        best = max(part, key=lambda r: r["f1"])
        prms = [p for p in summary.get("prms") or [] if p["split"] == split and p["f1"] is not None]
        reads = "reads the gold answer" if best["uses_reference"] else "problem and steps only"
        text = (f"best label method `{best['method']}` ({reads}) F1 {with_ci(best['f1'], best['f1_ci'])} on "
                f"{best['rows']} rows")
        for rule, label in (("fixed", "at 0.5"), (None, "threshold chosen on the other split")):
            mine = [p for p in prms if (p["threshold_from"] == "fixed") == (rule == "fixed")]
            if mine:
                prm = max(mine, key=lambda p: p["f1"])
                text += f"; best PRM {label} `{prm['prm']}` {with_ci(prm['f1'], prm['f1_ci'])}"
        rows.append([f"Against people: ProcessBench {split} split, human first-error labels (labelers on the rows "
                     "no choice was made on)", text, f"[`processbench.log`]({LOGS}/processbench.log)"])
    return rows


def shipped_label(card: dict) -> str:
    """The shipped PRM's head and labels, from its card.

    >>> shipped_label({"head": "lm", "label_method": "truth"})
    'LM head, exact step truth'
    """
    heads = {"lm": "LM head", "classifier": "classification head"}
    labels = {"truth": "exact step truth"}
    return (f"{heads.get(card.get('head'), card.get('head'))}, "
            f"{labels.get(card.get('label_method'), card.get('label_method'))}")


def methods_table() -> str:
    """Every label method of the method table, in its order: a new method is listed here by `make docs` alone."""
    from warehouse.methods import method, method_names

    rows = []
    for m in map(method, method_names()):
        asset = f"`{m.asset_key}`{' (opt-in)' if m.opt_in else ''}" if m.asset_key else "- (imported)"
        rows.append(f"| `{m.name}` | {m.kind} | {m.display} | {asset} | {m.recipe_key or '-'} |")
    return "\n".join(["| method | kind | what | asset | recipe `labels.methods` |", "|---|---|---|---|---|", *rows])


def readme_with_results(readme: str, results: Path) -> str:
    """``readme`` with the results block replaced by the current headline table and its glossary link."""
    return RESULTS.fill(readme, f"{headline(results)}\n\n{GLOSSARY}", "README.md")


def markdown_pages(repo: Path) -> dict[Path, str]:
    """Each hand-written page with generated blocks (relative to ``repo``) and the text it should hold now: cheap to
    compute (no code location is loaded), so the docs build checks them on every run."""
    results = repo / "benchmarks" / "results"
    layers = layers_text((repo / "pyproject.toml").read_text(encoding="utf-8"))
    readme = (repo / "README.md").read_text(encoding="utf-8")
    graph = (repo / "docs" / "concepts" / "asset-graph.md").read_text(encoding="utf-8")
    recipes = (repo / "docs" / "recipes.md").read_text(encoding="utf-8")
    recipes = COSTS.fill(recipes, costs_table(results), "docs/recipes.md")
    labels = (repo / "docs" / "concepts" / "labels.md").read_text(encoding="utf-8")
    return {Path("docs/concepts/labels.md"): METHOD_TABLE.fill(labels, methods_table(), "docs/concepts/labels.md"),
            Path("README.md"): LAYERS.fill(readme_with_results(readme, results), layers, "README.md"),
            Path("docs/concepts/asset-graph.md"): LAYERS.fill(graph, layers, "docs/concepts/asset-graph.md"),
            Path("docs/recipes.md"): ANSWERS.fill(recipes, rates_table(results), "docs/recipes.md")}


def expected(repo: Path) -> dict[Path, str]:
    """Each synced file's path (relative to ``repo``) and the text it should hold now."""
    from docs.hooks.reference import asset_graph_svg, load_assets

    assets, _ = load_assets()
    return {SVG: asset_graph_svg(assets), **markdown_pages(repo)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m docs.hooks.sync", description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true", help="rewrite the stale files")
    mode.add_argument("--check", action="store_true", help="exit 1 naming the stale files")
    args = parser.parse_args(argv)
    stale = []
    for rel, text in expected(REPO).items():
        path = REPO / rel
        if path.is_file() and path.read_text(encoding="utf-8") == text:
            continue
        if args.write:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            print(f"wrote {rel}")
        else:
            stale.append(str(rel))
    if stale:
        print(f"Error: {', '.join(stale)} out of date with the code or the logs - run `make docs`", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
