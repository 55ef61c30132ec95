"""Train a PRM from a warehouse :class:`TrainingSet` or TRL stepwise-supervision rows: ``head="lm"`` goes to
:mod:`prm.training.lm_head`; ``head="classifier"`` trains here with the HF ``Trainer``.

The classification head's folder is a normal HF model folder (``AutoModelForTokenClassification`` loads it;
LoRA adapters are merged in) plus its tokenizer, ``prm_convention.json`` (where the scorer reads the head) and
``prm_card.json`` (config, label method, counts, skipped rows, final metrics). Trainer checkpoints live in
``<out_dir>/checkpoints``; ``resume=True`` continues from the last one.

Several processes (``accelerate launch --multi_gpu --num_processes N`` or ``torchrun --nproc_per_node N``
running ``python -m prm.training train``): DDP over gloo on CPU, NCCL on CUDA. The configured ``batch_size``
stays the global batch (each rank takes ``batch_size / N`` rows of the same seeded order a one-process run
reads), the loss is the mean over the global batch's tags, and only rank 0 writes the folder. With train rows
a multiple of ``batch_size`` the N-process run takes the one-process run's steps (to float rounding, head
dropout aside); otherwise each epoch's short last batch is topped up with rows from the epoch's start
(accelerate's ``even_batches``), where one process takes it short. Val step accuracy and AUC come from all
ranks' gathered predictions; ``eval_loss`` is the Trainer's average of per-rank losses, close but not equal
to the one-process value when the val rows do not split evenly.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from transformers import Trainer, TrainerCallback, TrainingArguments, set_seed
from transformers.trainer_utils import get_last_checkpoint

from prm.files import atomic_write_text, dumps_strict, json_kind
from prm.format import ContextOverflowError
from prm.metrics import roc_auc
from prm.scoring import prm_kind
from prm.training.config import PRMTrainConfig
from prm.training.constants import CARD_FILE, CHECKPOINT_DIR, CONVENTION_NAME, IGNORE_INDEX, META_FILE, SPLITS
from prm.training.data import TrainingSet
from prm.training.finite import check_finite_weights
from prm.training.lm_head import check_fits_context, train_lm_head
from prm.training.model import (
    CONVENTION,
    PadCollator,
    context_length,
    encode_row,
    load_backbone,
    prm_loss,
    step_accuracy,
)
from prm.training.out_folder import check_out, clear_checkpoints, clear_model_files, write_manifest
from prm.training.rows import check_both_classes, check_rows, class_counts, locate_rows, split_of

log = logging.getLogger(__name__)

TrainData = TrainingSet | Sequence[Mapping[str, Any]] | str | Path | Any  # Any: a datasets.Dataset(Dict)


@dataclass(frozen=True)
class _Source:
    """Rows to train on and what the card says about where they came from."""

    rows: list[dict[str, Any]]
    label_method: str | None  # the step_labels method (TrainingSet) or None for rows of unknown origin
    class_weights: tuple[float, float] | None = None
    training_set: dict[str, Any] | None = None  # the TrainingSetConfig, when there is one
    warehouse_versions: dict[str, int | None] | None = None  # the table versions it was read from
    where: list[str] | None = None  # each row's origin for error messages ("rows.jsonl:3"); None: "row i"


@dataclass
class _Encoded:
    """Encoded rows per split, and how many rows of each split did not fit the context."""

    examples: dict[str, list[dict[str, list]]] = field(default_factory=lambda: {s: [] for s in SPLITS})
    rows: dict[str, list[Mapping[str, Any]]] = field(default_factory=lambda: {s: [] for s in SPLITS})
    skipped: dict[str, int] = field(default_factory=lambda: dict.fromkeys(SPLITS, 0))


class _TokensThisRun(TrainerCallback):
    """Input tokens seen at the start of this run (a resumed run starts from its checkpoint's count)."""

    start = 0

    def on_train_begin(self, args, state, control, **kwargs):
        self.start = int(state.num_input_tokens_seen or 0)


class _FiniteBeforeSave(TrainerCallback):
    """Stops training before a checkpoint (or the final save) would write a NaN or infinite weight."""

    def __init__(self, out: Path, config: PRMTrainConfig) -> None:
        self.out, self.config = out, config

    def on_step_end(self, args, state, control, model=None, **kwargs):
        if control.should_save and model is not None:  # DefaultFlowCallback, called first, has set it
            check_finite_weights(model, self.out, _lower(self.config))


def _lower(config: PRMTrainConfig) -> dict[str, float]:
    """The settings a diverged run should lower, with their values."""
    return {"learning_rate": config.learning_rate, "weight_decay": config.weight_decay}


class PRMTrainer(Trainer):
    """``Trainer`` with the PRM loss read at the step tags (:func:`prm_loss`)."""

    def __init__(self, *args: Any, label_kind: str, class_weights: tuple[float, float] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.label_kind = label_kind
        self.class_weights = class_weights

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):  # type: ignore[override]
        outputs = model(input_ids=inputs["input_ids"], attention_mask=inputs["attention_mask"])
        loss = prm_loss(outputs.logits, inputs["labels"], self.label_kind, self.class_weights, num_items_in_batch)
        if num_items_in_batch is not None and self.args.average_tokens_across_devices:
            # num_items_in_batch counts the tags of every rank's batch and DDP averages the ranks' gradients, so
            # this rank's tag sum / global count is scaled back up by the rank count (as Trainer.compute_loss
            # does): the gradient is then that of the global batch's mean, whatever the number of processes.
            loss = loss * self.accelerator.num_processes
        return (loss, outputs) if return_outputs else loss


def _margins(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Keep logit[1] - logit[0] per token instead of both logits: half the memory eval accumulates."""
    return logits[..., 1] - logits[..., 0]


def _val_metrics(prediction: Any) -> dict[str, float]:
    """Step accuracy and step ROC-AUC (P(good) ranking good steps above bad ones) on the val tags."""
    margins, labels = np.asarray(prediction.predictions), np.asarray(prediction.label_ids, dtype=float)
    correct, scored = step_accuracy(margins, labels)
    mask = labels != IGNORE_INDEX
    auc = roc_auc(labels[mask] >= 0.5, margins[mask])
    metrics = {"step_accuracy": correct / scored if scored else float("nan")}
    if auc is not None:
        metrics["step_auc"] = auc
    return metrics


def _source(data: TrainData, config: PRMTrainConfig) -> _Source:
    if isinstance(data, str | Path) and (Path(data) / META_FILE).is_file():
        data = TrainingSet.load(data)
    if isinstance(data, TrainingSet):
        if data.config.label_kind != config.label_kind:
            raise ValueError(f"the training set holds {data.config.label_kind} labels but PRMTrainConfig.label_kind="
                             f"{config.label_kind!r}; set the same label_kind in both")
        return _Source(list(data.rows), data.config.method, data.stats.class_weights, asdict(data.config),
                       data.warehouse_versions)
    rows, where = locate_rows(data)
    if not rows:
        name = data if isinstance(data, str | Path) else "the data given to train_prm"
        raise ValueError(f"{name} holds no rows (an empty file?); write TRL stepwise rows into it "
                         "(prm.export.write_trl_stepwise) or pass another file")
    return _Source(rows, None, where=where)


def _check_has_train_rows(rows: Sequence[Mapping[str, Any]]) -> None:
    splits = {s: n for s in SPLITS if (n := sum(split_of(r) == s for r in rows))}
    if not splits.get("train"):
        raise ValueError(f"none of the {len(rows)} rows is a train row (splits {splits}); set 'split' to 'train' on "
                         "the rows to train on, or drop the column (rows without a split train)")


def _encode(rows: Sequence[Mapping[str, Any]], tokenizer: Any, config: PRMTrainConfig, max_length: int) -> _Encoded:
    """Encode every train and val row; a row over the context is skipped and counted, never cut."""
    encoded = _Encoded()
    for row in rows:
        split = split_of(row)
        if split == "test":
            continue  # held out: evaluation scores these, training never reads them
        try:
            encoded.examples[split].append(encode_row(tokenizer, row, config.label_kind, max_length))
            encoded.rows[split].append(row)
        except ContextOverflowError:
            encoded.skipped[split] += 1
    if encoded.skipped["train"] + encoded.skipped["val"]:
        log.warning("PRM training: skipped %s rows longer than the %d-token context",
                    {s: n for s, n in encoded.skipped.items() if n}, max_length)
    return encoded


def per_device_batch(batch_size: int, world_size: int) -> int:
    """Rows per rank and step so that ``world_size`` ranks together take ``batch_size`` (the global batch).

    >>> per_device_batch(16, 2)
    8
    >>> per_device_batch(16, 3)
    Traceback (most recent call last):
    ...
    ValueError: PRMTrainConfig.batch_size=16 does not split over 3 processes...
    """
    if batch_size % world_size:
        raise ValueError(f"PRMTrainConfig.batch_size={batch_size} does not split over {world_size} processes: it is "
                         f"the global batch, each rank takes batch_size / {world_size}; set a multiple of {world_size} "
                         "or launch a number of processes that divides it")
    return batch_size // world_size


def _training_args(out: Path, config: PRMTrainConfig, has_val: bool) -> TrainingArguments:
    """The Trainer's arguments; building them joins the process group when a launcher started several ranks."""
    cuda = torch.cuda.is_available()
    args = TrainingArguments(
        output_dir=str(out / CHECKPOINT_DIR),
        per_device_train_batch_size=config.batch_size,
        per_device_eval_batch_size=config.batch_size,
        learning_rate=config.learning_rate,
        weight_decay=config.weight_decay,
        warmup_steps=config.warmup_steps,
        num_train_epochs=config.num_epochs,
        max_steps=config.max_steps,
        logging_steps=config.logging_steps,
        eval_strategy="steps" if has_val else "no",
        eval_steps=config.eval_steps,
        save_strategy="steps",
        save_steps=config.save_steps,
        save_total_limit=config.save_total_limit,
        seed=config.seed,
        data_seed=config.seed,
        bf16=cuda and config.bf16_on_cuda and torch.cuda.is_bf16_supported(),
        use_cpu=not cuda,
        report_to="none",
        remove_unused_columns=False,  # the collator needs input_ids and labels, which are all we pass
        label_names=["labels"],  # peft-wrapped models hide the forward signature the Trainer would read
        include_num_input_tokens_seen="non_padding",  # for train tokens/s in the card
        dataloader_num_workers=0,
        disable_tqdm=True,
    )
    # Known only once the process group is up (args.world_size reads it); the same samples per optimizer
    # step at any process count keep one- and N-process runs comparable.
    args.per_device_train_batch_size = per_device_batch(config.batch_size, args.world_size)
    args.per_device_eval_batch_size = args.per_device_train_batch_size
    return args


def _barrier(args: TrainingArguments) -> None:
    if args.world_size > 1:
        torch.distributed.barrier()


def train_prm(data: TrainData, out_dir: str | Path, config: PRMTrainConfig | None = None, *,
              resume: bool = False) -> Path:
    """Train a PRM on ``data`` and save it to ``out_dir``; returns ``out_dir``. ``config.head`` picks what reads
    a step: the LM head (default; :mod:`prm.training.lm_head`) or a two-class classification head (this module).

    ``data``: a :class:`TrainingSet` (or a folder written by ``TrainingSet.save``), TRL stepwise-supervision
    rows (``prompt``, ``completions``, ``labels``; an optional ``split`` column picks ``train``/``val`` rows,
    rows without one train), a ``datasets`` Dataset/DatasetDict or its ``save_to_disk`` folder, or a
    ``.jsonl`` / ``.parquet`` file of such rows. ``test`` rows are never read.

    ``out_dir`` is new, empty, or a PRM folder train_prm wrote, whose files (listed in its ``prm_files.json``) the
    save replaces (subfolders such as the checkpoints a resume reads stay); a folder holding any other file is
    refused before training, and a model whose weights came out NaN or infinite is never saved.

    Example::

        ts = build_training_set("data/warehouse", TrainingSetConfig(method="omegaprm"))
        folder = train_prm(ts, "models/prm-omegaprm", PRMTrainConfig(max_steps=300))
    """
    config = config or PRMTrainConfig()
    out = Path(out_dir)
    check_out(out)
    source = _source(data, config)
    check_rows(source.rows, config.label_kind, source.where)
    _check_has_train_rows(source.rows)
    threads = torch.get_num_threads()
    torch.set_num_threads(config.torch_threads)
    try:
        train = prm_kind(config.head, "head").train_function()  # the kind's trainer (prm.scoring.PRM_KINDS)
        return train(source, out, config, resume)
    finally:
        torch.set_num_threads(threads)


def train_lm(source: _Source, out: Path, config: PRMTrainConfig, resume: bool) -> Path:
    """The ``lm`` kind's trainer: :func:`prm.training.lm_head.train_lm_head` on the source's rows."""
    provenance = {"label_method": source.label_method, "training_set": source.training_set,
                  "warehouse_versions": source.warehouse_versions}
    return train_lm_head(source.rows, out, config, provenance=provenance, resume=resume)


def train_classifier(source: _Source, out: Path, config: PRMTrainConfig, resume: bool) -> Path:
    """The ``classifier`` kind's trainer: a two-class head at each step tag, with the HF ``Trainer``."""
    checkpoints = out / CHECKPOINT_DIR
    last = get_last_checkpoint(str(checkpoints)) if checkpoints.is_dir() else None
    if resume and last is None:
        raise FileNotFoundError(f"resume=True but {checkpoints} holds no checkpoint; train with resume=False first "
                                "(checkpoints are written every save_steps steps)")
    set_seed(config.seed)
    model, tokenizer = load_backbone(config)
    max_length = context_length(model, config)
    encoded = _encode(source.rows, tokenizer, config, max_length)
    check_fits_context([r for r in source.rows if split_of(r) == "train"], encoded.rows["train"], encoded.skipped,
                       max_length, config.base_model)
    check_both_classes(encoded.rows["train"], "the train rows")
    has_val = bool(encoded.examples["val"])
    args = _training_args(out, config, has_val)
    if not resume and args.should_save and checkpoints.is_dir():  # rank 0 only; the others wait at the barrier
        log.warning("removing old checkpoints in %s: a fresh run must not resume from another run's state", checkpoints)
        clear_checkpoints(out)
    _barrier(args)
    trainer = PRMTrainer(
        model=model,
        args=args,
        train_dataset=encoded.examples["train"],
        eval_dataset=encoded.examples["val"] or None,
        data_collator=PadCollator(tokenizer.pad_token_id, config.label_kind),
        processing_class=tokenizer,
        compute_metrics=_val_metrics if has_val else None,
        preprocess_logits_for_metrics=_margins,
        label_kind=config.label_kind,
        class_weights=source.class_weights,
        callbacks=[tokens := _TokensThisRun(), _FiniteBeforeSave(out, config)],
    )
    result = trainer.train(resume_from_checkpoint=last if resume else None)
    runtime = result.metrics["train_runtime"]
    run_tokens = int(trainer.state.num_input_tokens_seen or 0) - tokens.start
    final = {"train_loss": result.training_loss, "train_runtime_s": runtime,
             "train_tokens_per_s": run_tokens / runtime if runtime else 0.0}
    if has_val:
        final.update(trainer.evaluate())
    model = trainer.model
    if config.lora_r:
        model = model.merge_and_unload()  # a plain HF folder: no peft needed to load or score it
    check_finite_weights(model, out, _lower(config))  # every rank: none is left waiting at the barrier
    if trainer.is_world_process_zero():
        _save(out, model, tokenizer, source, config, encoded, trainer, final, Path(last).name if resume else None)
    _barrier(args)  # every rank returns a finished folder
    return out


def _save(out: Path, model: Any, tokenizer: Any, source: _Source, config: PRMTrainConfig, encoded: _Encoded,
          trainer: PRMTrainer, final: dict[str, float], resumed_from: str | None) -> None:
    """Model, tokenizer, convention file, then the card last (atomically): a folder with a card is complete."""
    from prm.models import model_version

    clear_model_files(out)  # an earlier model's files (another head's recipe, a chat template) would be read back
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    CONVENTION.save(out)
    write_manifest(out)  # what the next save into this folder may delete: these files and the card
    state = trainer.state
    counts = {s: class_counts(encoded.rows[s]) for s in ("train", "val")}
    card = {
        "head": "classifier",
        "base_model": config.base_model,
        "base_model_version": model_version(config.base_model),
        "convention": CONVENTION_NAME,
        "label_method": source.label_method,
        "label_kind": config.label_kind,
        "training_set": source.training_set,
        "warehouse_versions": source.warehouse_versions,
        "class_weights": source.class_weights,
        "config": config.to_dict(),
        "rows": {s: len(encoded.rows[s]) for s in ("train", "val")},
        "test_rows_unused": sum(split_of(r) == "test" for r in source.rows),
        "steps": {s: {"good": g, "bad": b} for s, (g, b) in counts.items()},
        "skipped_context_overflow": {s: encoded.skipped[s] for s in ("train", "val")},
        "max_length": context_length(model, config),
        "global_step": state.global_step,
        "world_size": trainer.args.world_size,  # processes that trained it; batch_size is their global batch
        "per_device_batch_size": trainer.args.per_device_train_batch_size,
        "epoch": state.epoch,
        "resumed_from": resumed_from,
        "loss_history": [[e["step"], e["loss"]] for e in state.log_history if "loss" in e],
        "eval_history": [{k: v for k, v in e.items() if k.startswith("eval_") or k == "step"}
                         for e in state.log_history if "eval_loss" in e],
        "final_metrics": {k: v for k, v in final.items() if isinstance(v, int | float)},
        "train_tokens": int(state.num_input_tokens_seen or 0),  # non-padding tokens, resumed steps included
        "device": "cuda" if torch.cuda.is_available() else "cpu",
        "dtype": "bf16" if trainer.args.bf16 else "fp32",
        "torch_version": torch.__version__,
    }
    atomic_write_text(out / CARD_FILE, dumps_strict(card, indent=2) + "\n")  # strict JSON: a NaN metric is null


def read_prm_card(folder: str | Path) -> dict[str, Any]:
    """The ``prm_card.json`` of a trained PRM folder; a clear error when the folder has none.

    >>> read_prm_card("/nonexistent")
    Traceback (most recent call last):
    ...
    FileNotFoundError: /nonexistent has no prm_card.json...
    """
    path = Path(folder) / CARD_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{folder} has no {CARD_FILE}: it is not a finished train_prm folder (training "
                                "was interrupted, or it is a PRM from elsewhere); retrain with train_prm")
    fix = "retrain with train_prm, or restore the folder's card (train_prm writes a JSON object)"
    try:
        card = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as err:  # a hand-edited or truncated card
        raise ValueError(f"{path}: not JSON ({err}); {fix}") from None
    if not isinstance(card, dict):
        raise ValueError(f"{path}: {json_kind(card)}, not a JSON object; {fix}")
    return card
