"""The PRM network and its pure pieces: backbone loading, row encoding, padding, loss and step accuracy.

Layout (Qwen2.5-Math-PRM / TRL): a causal-LM backbone with a new two-class token-classification head, read
at the step tag after each step; class 1 = good. Rows are encoded with :func:`prm.format.encode_steps` under
``CONVENTIONS["prm-pipeline"]`` and the prompt from :func:`prm.format.format_prompt`: the same two calls the
scorer makes, so training and scoring read the head at the same tokens.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch
import torch.nn.functional as F

from prm.format import CONVENTIONS, encode_steps, format_prompt
from prm.training.config import PRMTrainConfig
from prm.training.constants import CONVENTION_NAME, ID2LABEL, IGNORE_INDEX, SOFT_THRESHOLD

CONVENTION = CONVENTIONS[CONVENTION_NAME]
HEAD_MODULES = ("score", "classifier")  # the token-classification head's name in HF models (Llama: score)


def load_backbone(config: PRMTrainConfig) -> tuple[torch.nn.Module, Any]:
    """(model, tokenizer): ``AutoModelForTokenClassification`` with a fresh 2-class head on ``base_model``,
    the backbone frozen or wrapped in LoRA adapters as the config says. Seed torch before calling."""
    from transformers import AutoModelForTokenClassification, AutoTokenizer

    from prm.models import resolve_model

    base = str(resolve_model(config.base_model))
    tokenizer = AutoTokenizer.from_pretrained(base)
    if tokenizer.pad_token is None:  # SmolLM-style tokenizers: padding is masked out, any id will do
        tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForTokenClassification.from_pretrained(
        base, num_labels=2, id2label=ID2LABEL, label2id={v: k for k, v in ID2LABEL.items()}, dtype=torch.float32,
    )
    model.config.pad_token_id = tokenizer.pad_token_id
    if config.freeze_backbone:
        for name, param in model.named_parameters():
            param.requires_grad = name.split(".")[0] in HEAD_MODULES
    if config.lora_r:
        from peft import LoraConfig, TaskType, get_peft_model

        # TOKEN_CLS makes peft train the head (score / classifier) fully next to the adapters.
        lora = LoraConfig(task_type=TaskType.TOKEN_CLS, r=config.lora_r, lora_alpha=config.lora_alpha,
                          lora_dropout=config.lora_dropout)
        model = get_peft_model(model, lora)
    return model, tokenizer


def context_length(model: torch.nn.Module, config: PRMTrainConfig) -> int:
    """Tokens one encoded solution may use: the config's ``max_length`` or the backbone's positions."""
    limit = getattr(model.config, "max_position_embeddings", None)
    if config.max_length is not None:
        return min(config.max_length, limit) if limit else config.max_length
    if not limit:
        raise ValueError("the backbone's config has no max_position_embeddings; set PRMTrainConfig.max_length")
    return int(limit)


def encode_row(tokenizer: Any, row: Mapping[str, Any], label_kind: str,
               max_length: int | None = None) -> dict[str, list]:
    """``input_ids`` of prompt + tagged steps and ``labels``: ``IGNORE_INDEX`` everywhere but the tag of each
    step, which holds its class (hard: 0/1) or P(good) (soft). Raises ``ContextOverflowError`` when too long.

    >>> from prm.policy import build_char_tokenizer
    >>> enc = encode_row(build_char_tokenizer(), {"prompt": "1+2", "completions": ["1+2 = 3"],
    ...                                           "labels": [True]}, "hard")
    >>> [label for label in enc["labels"] if label != IGNORE_INDEX]
    [1]
    """
    prompt = format_prompt(tokenizer, row["prompt"])
    encoded = encode_steps(tokenizer, prompt, row["completions"], CONVENTION, max_length)
    labels: list = [IGNORE_INDEX] * len(encoded.input_ids)
    for position, value in zip(encoded.tag_positions, row["labels"], strict=True):
        labels[position] = int(float(value) >= SOFT_THRESHOLD) if label_kind == "hard" else float(value)
    return {"input_ids": encoded.input_ids, "labels": labels}


class PadCollator:
    """Right-pads ``input_ids`` with the pad id and ``labels`` with ``IGNORE_INDEX``; adds ``attention_mask``."""

    def __init__(self, pad_token_id: int, label_kind: str) -> None:
        self.pad_token_id = pad_token_id
        self.label_dtype = torch.long if label_kind == "hard" else torch.float32

    def __call__(self, batch: Sequence[Mapping[str, list]]) -> dict[str, torch.Tensor]:
        width = max(len(b["input_ids"]) for b in batch)
        ids = torch.full((len(batch), width), self.pad_token_id, dtype=torch.long)
        mask = torch.zeros((len(batch), width), dtype=torch.long)
        labels = torch.full((len(batch), width), IGNORE_INDEX, dtype=self.label_dtype)
        for i, b in enumerate(batch):
            n = len(b["input_ids"])
            ids[i, :n] = torch.tensor(b["input_ids"])
            mask[i, :n] = 1
            labels[i, :n] = torch.tensor(b["labels"], dtype=self.label_dtype)
        return {"input_ids": ids, "attention_mask": mask, "labels": labels}


def prm_loss(logits: torch.Tensor, labels: torch.Tensor, label_kind: str,
             class_weights: tuple[float, float] | None = None, num_items: int | torch.Tensor | None = None,
             ) -> torch.Tensor:
    """Loss at the step tags: cross-entropy over the two classes (hard), or BCE of logit[1] - logit[0]
    against P(good) (soft; sigmoid(l1 - l0) = softmax(l)[1], the score the scorer reads).

    Summed over tags and divided by ``num_items`` (the Trainer's tag count over accumulated batches) or by
    this batch's tag count. ``class_weights`` = (bad, good) weights each tag's loss by its class.

    >>> logits = torch.tensor([[[0.0, 0.0], [0.0, 0.0]]])
    >>> round(prm_loss(logits, torch.tensor([[IGNORE_INDEX, 1]]), "hard").item(), 4)  # log 2
    0.6931
    """
    mask = labels != IGNORE_INDEX
    picked = logits[mask].float()
    target = labels[mask]
    if label_kind == "hard":
        target = target.long()
        per_tag = F.cross_entropy(picked, target, reduction="none")
        good = target.float()
    else:
        good = target.float()
        per_tag = F.binary_cross_entropy_with_logits(picked[:, 1] - picked[:, 0], good, reduction="none")
    if class_weights is not None:
        bad_w, good_w = class_weights
        per_tag = per_tag * (good * good_w + (1 - good) * bad_w)
    denominator = num_items if num_items is not None else mask.sum().clamp(min=1)
    return per_tag.sum() / denominator


def step_accuracy(margins: Any, labels: Any) -> tuple[int, int]:
    """(correct, scored) at the tags: predicted good iff logit[1] - logit[0] > 0, true good iff
    label >= ``SOFT_THRESHOLD``. ``margins`` and ``labels`` are same-shaped arrays, ``IGNORE_INDEX`` off-tag.

    >>> import numpy as np
    >>> step_accuracy(np.array([[2.0, -1.0, 0.5]]), np.array([[1, 1, IGNORE_INDEX]]))
    (1, 2)
    """
    import numpy as np

    labels = np.asarray(labels, dtype=float)
    mask = labels != IGNORE_INDEX
    predicted = np.asarray(margins, dtype=float)[mask] > 0
    truth = labels[mask] >= SOFT_THRESHOLD
    return int((predicted == truth).sum()), int(mask.sum())
