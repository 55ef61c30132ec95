"""The shipped PRM: the recipe's LM-head PRM over the shipped policy, rebuilt by ``make prm`` and checked on load.

The recipe (:class:`ShippedRecipe`): word problems of 4-8 operations from the seeded generator, 8 solutions each
sampled from the shipped policy, labeled with exact step truth; the PRM trains with :class:`PRMTrainConfig`'s
defaults (the LM head, the reference floor) on problems of <= 6 operations, split by problem into train, validation
and test. Everything is counted in optimizer steps, never wall-clock. The card (``prm_card.json``) gains a
``shipped`` entry: the recipe, the validation and test figures (ProcessBench F1, best-of-N gain over majority vote,
step sensitivity, off-policy detection, each with its 95% interval, beside the constant baseline) and the digests of
every file that changes its scores and of its reference policy (:func:`prm.models.score_digests`, the record its
registry version is computed from), which :func:`verify_shipped_prm` checks, naming what changed.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from prm.best_of_n import CONSTANT
from prm.datagen import sample_solution_rows
from prm.evaluation import heldout_solutions, split_test_sets
from prm.evaluation.folder import evaluate_folder
from prm.generation import SOLUTION_MAX_TOKENS, GenerationConfig, make_backend
from prm.models import (
    ARITH_POLICY_NAME,
    SHIPPED_PRM_DIR,
    model_version,
    prompter_for,
    read_prm_card_entry,
    score_digests,
    verify_shipped_prm,
)
from prm.policy import weight_digests
from prm.tasks import ArithmeticSourceConfig, generate_arithmetic
from prm.training.config import PRMTrainConfig
from prm.training.data import TrainingSetConfig, build_training_set
from prm.training.splits import stratified_splits
from prm.training.trainer import train_prm
from warehouse import Warehouse, connect

# The folder (prm/shipped/arith-prm) and the card check (verify_shipped_prm) live with the other shipped models in
# prm.models (prm/models/shipped.py), which reads the card under these names.
CARD_FILE = "prm_card.json"
SHIPPED_KEY = "shipped"  # the card's entry this module writes and verify_shipped_prm checks
DIGESTS_KEY = "score_digests"  # the entry's record of every file that changes a score (prm.models.score_digests)
_RESTORE = "restore the folder with `git checkout -- prm/shipped/arith-prm` or rebuild the PRM with `make prm`"

LEGACY_WEIGHTS_KEY = "weights_sha256"  # the weights-only record cards held before DIGESTS_KEY
SOURCE, DAY = "shipped-prm", "2026-01-01"  # the scratch warehouse's partition
# The figures the card records per test set, from prm.evaluation's rows (metric name or prefix -> card key).
FIGURES = {"processbench_f1": "f1", "bon_gain@": "bon_gain", "step_sensitivity": "step_sensitivity",
           "right_at_or_above_threshold": "right_at_or_above_threshold"}
LABELS = {"f1": "ProcessBench F1", "bon_gain": "best-of-N gain over majority vote",
          "step_sensitivity": "step sensitivity (sibling steps)",
          "worst_detection": "off-policy detection, worst kind"}


def _figure_key(metric: str) -> str | None:
    return next((key for name, key in FIGURES.items() if metric == name or (name.endswith("@")
                                                                             and metric.startswith(name))), None)


@dataclass(frozen=True)
class ShippedRecipe:
    """The data and the training run of the shipped PRM (the training config is PRMTrainConfig's defaults)."""

    levels: tuple[int, ...] = (4, 5, 6, 7, 8)  # gold operations per problem
    per_level: int = 300  # problems per level
    samples: int = 8  # solutions per problem
    temperature: float = 1.0
    seed: int = 0  # seeds the problems, the samples, the split and the training run
    train_max_steps: int = 6  # trains on <= 6 operations; longer problems are the easy-to-hard test set
    val_share: float = 0.2
    test_share: float = 0.2
    train: PRMTrainConfig = field(default_factory=lambda: PRMTrainConfig(eval_steps=10_000, save_steps=10_000))

    def data(self, source: str = SOURCE) -> TrainingSetConfig:
        """The training set's config: exact step truth on the warehouse's ``source``."""
        return TrainingSetConfig(method="truth", train_max_steps=self.train_max_steps, val_share=self.val_share,
                                 test_share=self.test_share, source=source, split_seed=self.seed)

    def to_dict(self) -> dict[str, Any]:
        return {**{k: v for k, v in asdict(self).items() if k != "train"}, "levels": list(self.levels),
                "train": self.train.to_dict()}


def sample_warehouse(root: Path, recipe: ShippedRecipe, progress: Callable[[str], None]) -> None:
    """Problems and the shipped policy's solutions (with exact step truth) in a warehouse at ``root``."""
    problems = [r.to_row() for r in generate_arithmetic(
        ArithmeticSourceConfig(n_ops=recipe.levels, per_level=recipe.per_level), seed=recipe.seed)]
    wh = Warehouse(root)
    kw = {"source": SOURCE, "day": DAY, "run_id": "shipped-prm"}
    wh.write("problems", problems, **kw)
    progress(f"sampling {recipe.samples} solutions for each of {len(problems)} problems")
    with make_backend(GenerationConfig(model=ARITH_POLICY_NAME, seed=recipe.seed)) as backend:
        sols, steps, stats = sample_solution_rows(
            backend, problems, prompter_for(ARITH_POLICY_NAME), model=model_version(ARITH_POLICY_NAME),
            n=recipe.samples, seed=recipe.seed, max_tokens=SOLUTION_MAX_TOKENS, temperature=recipe.temperature)
    wh.write("solutions", sols, writer="solutions", **kw)
    wh.write("steps", steps, writer="solutions", **kw)
    progress(f"{len(sols)} solutions, accuracy {stats.accuracy:.3f}")


def figures(rows: Sequence[Mapping[str, Any]], model: str) -> dict[str, dict[str, dict[str, Any]]]:
    """Per test set, the PRM's and the constant baseline's headline figures: ``{value, ci}`` per card key, and the
    worst off-policy perturbation kind's detection.

    >>> rows = [{"model": "m", "split": "t", "metric": "processbench_f1", "value": 0.9,
    ...          "detail_json": '{"ci": [0.8, 0.95]}'}]
    >>> figures(rows, "m")["t"]["prm"]["f1"]
    {'value': 0.9, 'ci': [0.8, 0.95]}
    """
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for r in rows:
        who = "prm" if r["model"] == model else "constant" if r["model"] == CONSTANT else None
        key = _figure_key(r["metric"])
        if who is None or (key is None and not r["metric"].startswith("perturbation:")):
            continue
        entry = out.setdefault(r["split"], {}).setdefault(who, {})
        ci = json.loads(r.get("detail_json") or "{}").get("ci")
        if key is not None:
            entry[key] = {"value": r["value"], "ci": ci}
        elif who == "prm" and r["value"] is not None:
            worst = entry.get("worst_detection")
            if worst is None or r["value"] < worst["value"]:
                entry["worst_detection"] = {"value": r["value"], "ci": ci, "kind": r["metric"].split(":", 1)[1]}
    return out


def figures_markdown(by_split: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> str:
    """:func:`figures` as a markdown table: per test set and figure, the PRM with its interval and the constant
    baseline.

    >>> print(figures_markdown({"test": {"prm": {"f1": {"value": 0.9, "ci": [0.8, 0.95]}},
    ...                                  "constant": {"f1": {"value": 0.0, "ci": None}}}}))
    | test set | figure | PRM [95% interval] | constant baseline |
    |---|---|---|---|
    | test | ProcessBench F1 | 0.900 [0.800, 0.950] | 0.000 |
    """
    def cell(entry: Mapping[str, Any] | None) -> str:
        if not entry or entry.get("value") is None:
            return "-"
        ci = entry.get("ci")
        interval = f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else ""
        kind = f" ({entry['kind']})" if entry.get("kind") else ""
        return f"{entry['value']:.3f}{interval}{kind}"

    lines = ["| test set | figure | PRM [95% interval] | constant baseline |", "|---|---|---|---|"]
    for split, who in by_split.items():
        for key, label in LABELS.items():
            if key in who.get("prm", {}):
                lines.append(f"| {split} | {label} | {cell(who['prm'].get(key))} | "
                             f"{cell(who.get('constant', {}).get(key))} |")
    return "\n".join(lines)


def build_shipped_prm(out: Path = SHIPPED_PRM_DIR, recipe: ShippedRecipe = ShippedRecipe(), *,
                      warehouse: Path | None = None, source: str = SOURCE, force: bool = False,
                      progress: Callable[[str], None] = print) -> dict[str, Any]:
    """Sample, train and evaluate the shipped PRM into ``out``; returns the card's ``shipped`` entry.

    ``warehouse``: a warehouse already holding this recipe's samples under ``source`` (an earlier build's, or
    ``benchmarks/prm_quality.py``'s at ``--per-level 300``, source "bench") is reused; else they are sampled into a
    scratch one. ``out`` is replaced only with ``force`` (it is a committed model), and only
    once the new folder is complete."""
    out = Path(out)
    if out.exists() and not force:
        raise FileExistsError(f"{out} exists: the shipped PRM is never overwritten silently; pass --force "
                              "(`make prm` does) to rebuild it")
    with tempfile.TemporaryDirectory(prefix="shipped-prm-") as scratch:
        root = Path(warehouse) if warehouse else Path(scratch) / "warehouse"
        if not Warehouse(root).files("solutions"):
            sample_warehouse(root, recipe, progress)
        con = connect(root)
        data = recipe.data(source)
        training_set = build_training_set(con, data)
        progress(f"training on {training_set.stats.solutions.get('train', 0)} solutions, "
                 f"{recipe.train.max_steps} optimizer steps")
        staged = out.parent / f".{out.name}.building"
        shutil.rmtree(staged, ignore_errors=True)
        train_prm(training_set, staged, recipe.train)
        heldout = heldout_solutions(con, stratified_splits(con, data), source=source)
        ev = evaluate_folder(staged, heldout, "truth", test_sets=split_test_sets(heldout["test"],
                                                                               recipe.train_max_steps))
    card_path = staged / CARD_FILE
    card = json.loads(card_path.read_text())
    entry = {"recipe": recipe.to_dict(), "figures": figures(ev.rows, ev.model), "bon_n": ev.bon_n,
             DIGESTS_KEY: score_digests(staged), "rebuild": "make prm"}
    card[SHIPPED_KEY] = entry
    card_path.write_text(json.dumps(card, indent=2) + "\n")
    if out.exists():
        old = out.parent / f".{out.name}.old"
        shutil.rmtree(old, ignore_errors=True)
        out.rename(old)
        staged.rename(out)
        shutil.rmtree(old)
    else:
        staged.rename(out)
    return entry


def evaluate_shipped_on_partition(con: Any, config: TrainingSetConfig) -> tuple[list[dict[str, Any]], str]:
    """The shipped PRM's evaluation rows on a partition's solutions and their markdown: validation chooses its
    threshold and aggregation; every problem outside validation is its test set, since it trained on none of them.
    A folder that fails its card check (:func:`verify_shipped_prm`) is refused before any scoring."""
    verify_shipped_prm(SHIPPED_PRM_DIR)
    splits = heldout_solutions(con, stratified_splits(con, config), splits=("train", "val", "test"),
                               source=config.source)
    heldout = {"val": splits["val"], "test": splits["train"] + splits["test"]}
    ev = evaluate_folder(SHIPPED_PRM_DIR, heldout, "truth", experiment="shipped_prm")
    n_problems = len({s["problem_id"] for s in heldout["test"]})
    head = (f"{n_problems} problems, {len(heldout['test'])} solutions outside validation (best-of-{ev.bon_n}); "
            "the shipped PRM trained on none of them")
    return ev.rows, head + "\n\n" + figures_markdown(figures(ev.rows, ev.model))


def reseal_shipped_card(folder: Path = SHIPPED_PRM_DIR) -> dict[str, Any]:
    """Record the folder's :func:`prm.models.score_digests` in its card, for a card written before the record's
    format changed (``make prm`` writes them at every build). A retrained or altered PRM is not resealed: the weights
    must still match the digests the card holds for them."""
    folder = Path(folder)
    card_path = folder / CARD_FILE
    card, entry = read_prm_card_entry(folder)
    weights = weight_digests(folder)
    recorded = entry.get(LEGACY_WEIGHTS_KEY) or {
        name: digest for name, digest in ((entry.get(DIGESTS_KEY) or {}).get("files") or {}).items() if name in weights}
    if not recorded or recorded != weights:
        raise ValueError(f"the shipped PRM's weights in {folder} do not match the digests its {CARD_FILE} holds, so "
                         f"its files are not the ones the card describes and resealing would bless them; {_RESTORE}")
    entry.pop(LEGACY_WEIGHTS_KEY, None)
    entry[DIGESTS_KEY] = score_digests(folder)
    card_path.write_text(json.dumps(card, indent=2) + "\n")
    return entry


__all__ = ["SHIPPED_PRM_DIR", "ShippedRecipe", "build_shipped_prm", "figures", "figures_markdown",
           "reseal_shipped_card", "verify_shipped_prm"]
