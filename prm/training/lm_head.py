"""``train_prm`` with ``head="lm"``: the LM-head PRM, each step scored by the backbone's own LM head against a
frozen reference (:mod:`prm.training.implicit` on step labels), saved with a ``prm_card.json`` like the
classification head's, so evaluation, the registry, search and the rewards read it the same way.

One process, no checkpoints: the arithmetic recipe is 400 steps (~4 min on 2 CPU cores).
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import torch

from prm.files import atomic_write_text, dumps_strict
from prm.implicit_recipe import IMPLICIT_CONFIG_FILE, read_recipe
from prm.metrics import roc_auc
from prm.scoring import context_of, encode_solution, implicit_step_readings, implicit_step_rewards
from prm.training.config import PRMTrainConfig
from prm.training.constants import CARD_FILE, OOD_MARGIN, OOD_QUANTILE, OOD_ROWS, SOFT_THRESHOLD
from prm.training.finite import check_finite_weights
from prm.training.implicit import Fitted, ImplicitPRMConfig, fit_implicit, save_implicit
from prm.training.out_folder import clear_model_files, write_manifest
from prm.training.rows import check_both_classes, class_counts, split_of

log = logging.getLogger(__name__)

VAL_ROWS_SCORED = 512  # val rows the card's eval metrics read (the evaluation scores every held-out row later)


def reference_of(base_model: str) -> str:
    """The model an LM-head PRM warm-started from ``base_model`` is scored against: the base's own reference
    when the base is itself an LM-head PRM (a flywheel round's parent), else the base."""
    from prm.models import resolve_model

    resolved = resolve_model(base_model)
    if isinstance(resolved, Path) and (resolved / IMPLICIT_CONFIG_FILE).is_file():
        return read_recipe(resolved)[0]  # the one reader of the recipe: a broken one is refused, with its fix
    return base_model


# Share of train rows longer than the backbone's context above which training is refused: past it the PRM would
# learn from a biased remainder (the shortest solutions), and a one-class error would blame the labels. A few long
# outliers stay a warning: the arith-policy backbone on SmolLM2's GSM8K solutions drops most rows, not a fifth.
MAX_OVERFLOW_SHARE = 0.2


def check_fits_context(train_rows: Sequence[Mapping[str, Any]], kept_train: Sequence[Mapping[str, Any]],
                       skipped: Mapping[str, int], limit: int, base_model: str) -> None:
    """Refuse, before training, a backbone too small for the data: more than MAX_OVERFLOW_SHARE of the train rows
    over its ``limit``-token context, or the overflow leaving one class where the rows had both.

    >>> rows = [{"labels": [True]}, {"labels": [False]}]
    >>> check_fits_context(rows, rows, {"train": 0, "val": 0}, 1024, "arith-policy")
    >>> check_fits_context(rows, rows[:1], {"train": 1, "val": 0}, 1024, "arith-policy")
    Traceback (most recent call last):
    ...
    ValueError: PRM backbone 'arith-policy' is too small for these solutions: 1 of 2 train rows (and 0 val rows) ...
    """
    over = skipped.get("train", 0)
    if not over:
        return
    good, bad = class_counts(kept_train)
    all_good, all_bad = class_counts(train_rows)
    lost_class = (not good or not bad) and all_good > 0 and all_bad > 0
    if over / max(len(train_rows), 1) <= MAX_OVERFLOW_SHARE and kept_train and not lost_class:
        return
    raise ValueError(
        (f"no train rows fit the {limit}-token context: " if not kept_train else "")
        + f"PRM backbone {base_model!r} is too small for these solutions: {over} of {len(train_rows)} train rows "
        f"(and {skipped.get('val', 0)} val rows) are longer than its {limit}-token context and would be dropped"
        + (", taking every " + ("bad" if all_bad and not bad else "good") + " step with them" if lost_class else "")
        + "; train on a backbone with a longer context (prm_model.base_model, or the recipe's prm.base_model: by "
        "default the recipe's policy), or shorten the solutions (sampling.max_tokens)")


def _fits(rows: Sequence[Mapping[str, Any]], tokenizer: Any, limit: int | None) -> tuple[list, int]:
    """The rows whose prompt and steps fit ``limit`` tokens, and how many did not (skipped, never cut)."""
    kept = [r for r in rows if limit is None or len(encode_solution(tokenizer, r["prompt"], r["completions"])
                                                       .input_ids) <= limit]
    return kept, len(rows) - len(kept)


def _triples(rows: Sequence[Mapping[str, Any]]) -> list[tuple[str, list[str], list[float]]]:
    return [(r["prompt"], list(r["completions"]), [float(x) for x in r["labels"]]) for r in rows]


def _val_metrics(fitted: Fitted, rows: Sequence[Mapping[str, Any]], beta: float, ref_floor: float | None = None
                 ) -> dict[str, float]:
    """BCE, step accuracy and step AUC of the trained PRM on (up to ``VAL_ROWS_SCORED``) val rows."""
    rows = list(rows)[:VAL_ROWS_SCORED]
    with torch.inference_mode():
        rewards = implicit_step_rewards(fitted.model, fitted.ref, fitted.tokenizer,
                                        [(r["prompt"], list(r["completions"])) for r in rows], beta=beta,
                                        ref_floor=ref_floor)
    logits = [x for steps in rewards for x in steps]
    labels = [float(x) for r in rows for x in r["labels"]]
    loss = torch.nn.functional.binary_cross_entropy_with_logits(torch.tensor(logits), torch.tensor(labels))
    good = [y >= SOFT_THRESHOLD for y in labels]
    metrics = {"eval_loss": float(loss),
               "eval_step_accuracy": sum((x >= 0) == g for x, g in zip(logits, good, strict=True)) / len(labels)}
    auc = roc_auc(good, logits)
    if auc is not None:
        metrics["eval_step_auc"] = auc
    return metrics


def ood_limit(fitted: Fitted, rows: Sequence[Mapping[str, Any]]) -> float | None:
    """The off-policy limit on a step's mean reference log-probability, measured on the train rows: their steps'
    OOD_QUANTILE quantile less OOD_MARGIN (None without steps)."""
    rows = list(rows)[:OOD_ROWS]
    with torch.inference_mode():
        readings = implicit_step_readings(fitted.model, fitted.ref, fitted.tokenizer,
                                          [(r["prompt"], list(r["completions"])) for r in rows], beta=1.0)
    values = sorted(lp for steps in readings for _, lp in steps)
    return round(values[int(OOD_QUANTILE * (len(values) - 1))] - OOD_MARGIN, 4) if values else None


def train_lm_head(rows: Sequence[Mapping[str, Any]], out: Path, config: PRMTrainConfig, *,
                  provenance: Mapping[str, Any], resume: bool = False) -> Path:
    """Train the LM-head PRM on the train rows of ``rows`` (TRL stepwise form) and save it in ``out``;
    ``provenance`` (label method, training set, warehouse versions) goes into the card."""
    from transformers import AutoConfig, AutoTokenizer

    from prm.models import model_version, resolve_model

    if resume:
        raise ValueError("head='lm' trains in one go and keeps no checkpoints (the recipe is 400 steps, ~4 min on "
                         "2 CPU cores); train again without resume, or use head='classifier' for resumable runs")
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        raise ValueError("head='lm' trains in one process; launch it without torchrun/accelerate, or use "
                         "head='classifier' for DDP")
    base = str(resolve_model(config.base_model))
    tokenizer = AutoTokenizer.from_pretrained(base)
    limit = config.max_length or context_of(AutoConfig.from_pretrained(base), tokenizer)
    by_split = {s: [r for r in rows if split_of(r) == s] for s in ("train", "val")}
    kept, skipped = {}, {}
    for split, split_rows in by_split.items():
        kept[split], skipped[split] = _fits(split_rows, tokenizer, limit)
    if skipped["train"] + skipped["val"]:
        log.warning("LM-head PRM: skipped %s rows longer than the %s-token context", skipped, limit)
    check_fits_context(by_split["train"], kept["train"], skipped, limit, config.base_model)
    check_both_classes(kept["train"], "the train rows")
    steps = config.max_steps if config.max_steps > 0 else math.ceil(
        config.num_epochs * len(kept["train"]) / config.batch_size)
    recipe = ImplicitPRMConfig(base_model=config.base_model, labels="step", beta=config.beta,
                               learning_rate=config.learning_rate, weight_decay=config.weight_decay, max_steps=steps,
                               batch_size=config.batch_size, seed=config.seed, torch_threads=config.torch_threads,
                               warmup_steps=config.warmup_steps, reference=reference_of(config.base_model),
                               ref_floor=config.ref_floor, negatives=config.negatives)
    fitted = fit_implicit(_triples(kept["train"]), recipe, progress=log.info)
    check_finite_weights(fitted.model, out, {"learning_rate": config.learning_rate, "weight_decay": config.weight_decay,
                                             "beta": config.beta})
    final = {"train_loss": fitted.loss_history[-1][1] if fitted.loss_history else float("nan"),
             "train_runtime_s": fitted.seconds,
             "train_tokens_per_s": fitted.train_tokens / fitted.seconds if fitted.seconds else 0.0}
    if kept["val"]:
        final.update(_val_metrics(fitted, kept["val"], config.beta, config.ref_floor))
    clear_model_files(out)  # an earlier model's files (a convention, a chat template) would be read back
    save_implicit(fitted, out, recipe, ood_ref_logprob=ood_limit(fitted, kept["train"]))
    write_manifest(out)  # what the next save into this folder may delete: these files and the card
    counts = {s: class_counts(kept[s]) for s in ("train", "val")}
    card = {
        "head": "lm", "base_model": config.base_model, "base_model_version": model_version(config.base_model),
        "reference": recipe.reference, "convention": None, **provenance,
        "label_kind": config.label_kind, "class_weights": None,  # the LM head's BCE is unweighted
        "config": config.to_dict(), "rows": {s: len(kept[s]) for s in ("train", "val")},
        "test_rows_unused": sum(split_of(r) == "test" for r in rows),
        "steps": {s: {"good": g, "bad": b} for s, (g, b) in counts.items()},
        "skipped_context_overflow": skipped, "max_length": limit, "global_step": steps, "world_size": 1,
        "per_device_batch_size": config.batch_size, "epoch": steps * config.batch_size / len(kept["train"]),
        "resumed_from": None, "loss_history": fitted.loss_history, "eval_history": [],
        "final_metrics": final, "train_tokens": fitted.train_tokens,
        "device": "cuda" if torch.cuda.is_available() else "cpu", "dtype": "fp32", "torch_version": torch.__version__,
    }
    atomic_write_text(out / CARD_FILE, dumps_strict(card, indent=2) + "\n")
    return out
