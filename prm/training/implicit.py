"""An implicit PRM (PRIME; Yuan et al. 2024, "Free Process Rewards without Process Labels"): the policy fine-tuned
so that a step's reward is ``beta * log(pi(step) / pi_ref(step))``, summed over the step's tokens.

``labels="outcome"`` (PRIME) minimises the cross-entropy of ``sigmoid(beta * sum over the solution)`` against
the solution's outcome: a baseline that reads steps without step labels, which a step-trained PRM must beat.
``labels="step"`` puts the same cross-entropy on every labelled step's own reward against its step label: a
PRM that scores each step through the LM head, token by token, where the policy's knowledge of the right
continuation lives (docs/concepts/prm.md, "Evaluation: does the PRM read the steps?").
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch

from prm.evaluation import training_negative
from prm.files import atomic_write_text
from prm.implicit_recipe import (
    IMPLICIT_CONFIG_FILE,
    IMPLICIT_LABELS,
    REFERENCE_TOKENIZER_KEY,
    check_beta,
    model_tokenizer_digest,
    tokenizer_digest,
)
from prm.scoring import encode_solution, token_log_ratios, token_logprobs
from prm.settings import (
    check_batch,
    check_learning_rate,
    check_range,
    check_seed,
    check_steps,
    check_threads,
    check_weight_decay,
)
from prm.training.finite import check_finite_weights

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ImplicitPRMConfig:
    """One implicit-PRM fine-tune; optimizer steps, never wall-clock time."""

    base_model: str = "arith-policy"
    labels: str = "outcome"  # "outcome" (PRIME) or "step" (each step's reward against its step label)
    beta: float = 0.05  # PRIME's reward scale; 0.5 trained step labels in 400 steps where 0.05 barely moved
    learning_rate: float = 5e-4
    # AdamW's own default. On 12k step-labelled solutions (beta 0.5, 400 steps, seed 0) 0.01 gave F1 0.915 and
    # 0.0 gave 0.696 with everything else equal (CHANGELOG.md, "Superseded recipes").
    weight_decay: float = 0.01
    max_steps: int = 400
    batch_size: int = 16
    seed: int = 0
    torch_threads: int = 1
    warmup_steps: int = 0  # linear warmup of the learning rate over this many steps
    # The model scores are read against; None: base_model. A warm start from another LM-head PRM keeps that
    # PRM's own reference, or every log-ratio would start at 0 and its knowledge would be lost.
    reference: str | None = None
    # Floor under the reference's token probability in the log-ratio (prm.scoring.implicit_scorer.token_log_ratios):
    # None reads log(pi / pi_ref) as PRIME does, which scores text the reference finds unlikely as good.
    ref_floor: float | None = None
    # labels="step": share of each batch's rows that also train on a perturbed copy (one right step replaced by a
    # wrong step the policy rarely writes, labelled wrong; prm.evaluation.perturbations.training_negative).
    negatives: float = 0.0

    def __post_init__(self) -> None:
        check_range("negatives", self.negatives, low=0.0, high=1.0, why="a share of each batch's rows")
        if self.negatives and self.labels != "step":
            raise ValueError("negatives are step labels: set labels='step', or negatives=0")
        if self.ref_floor is not None:
            check_range("ref_floor", self.ref_floor, low=0.0, high=1.0, low_open=True, high_open=True,
                        why="a probability floor; None for no floor")
        check_beta(self.beta)
        check_learning_rate("learning_rate", self.learning_rate)
        check_weight_decay("weight_decay", self.weight_decay)
        check_steps("max_steps", self.max_steps)
        check_steps("warmup_steps", self.warmup_steps, low=0)
        check_batch("batch_size", self.batch_size)
        check_seed("seed", self.seed)
        check_threads("torch_threads", self.torch_threads)
        if self.labels not in IMPLICIT_LABELS:
            raise ValueError(f"labels={self.labels!r} must be one of {IMPLICIT_LABELS}")


def _logits_and_targets(model: Any, ref: Any, batch: list[tuple[Any, Any]], labels: str, beta: float,
                        ref_floor: float | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """``beta * sum log(pi / pi_ref)`` over each solution (outcome) or each labelled step (step), and targets."""
    encoded = [e for e, _ in batch]
    lp = token_logprobs(model, encoded)
    with torch.no_grad():
        ref_lp = token_logprobs(ref, encoded)
    logits, targets = [], []
    for (e, target), a, b in zip(batch, lp, ref_lp, strict=True):
        ratio = token_log_ratios(a, b, ref_floor)
        if labels == "outcome":
            logits.append(ratio[e.spans[0][0]: e.spans[-1][1]].sum())
            targets.append(float(target))
            continue
        for (start, end), label in zip(e.spans, target, strict=True):
            if label is not None:
                logits.append(ratio[start:end].sum())
                targets.append(float(label))
    stacked = torch.stack(logits)
    return beta * stacked, torch.tensor(targets, device=stacked.device)


Row = tuple[str, Sequence[str], Any]  # question, steps, target
# Logits held at once per forward pass (batch x tokens x vocabulary): a batch over it is split into micro-batches
# whose gradients add up to the batch's (a 16 x 350-token batch of a 49k-vocabulary model holds 275M logits per model,
# ~4 GB with their log-softmax and gradients, on top of the activations).
LOGITS_PER_PASS = 32_000_000


def _n_targets(batch: Sequence[tuple[Any, Any]], labels: str) -> int:
    return len(batch) if labels == "outcome" else sum(t is not None for _, target in batch for t in target)


def _accumulate(model: Any, ref: Any, batch: list[tuple[Any, Any]], config: ImplicitPRMConfig, *, vocab: int
                ) -> torch.Tensor:
    """Backpropagate the batch's mean cross-entropy in micro-batches of at most :data:`LOGITS_PER_PASS` logits;
    returns the batch's loss (detached). The gradient equals one pass over the whole batch, up to float order."""
    total = max(_n_targets(batch, config.labels), 1)
    width = max(len(e.input_ids) for e, _ in batch)
    size = max(1, LOGITS_PER_PASS // max(width * vocab, 1))
    loss = torch.zeros(())
    for i in range(0, len(batch), size):
        chunk = batch[i: i + size]
        if _n_targets(chunk, config.labels) == 0:
            continue
        logit, target = _logits_and_targets(model, ref, chunk, config.labels, config.beta, config.ref_floor)
        part = torch.nn.functional.binary_cross_entropy_with_logits(logit, target, reduction="sum") / total
        part.backward()
        loss += part.detach().cpu()
    return loss


def _negatives(tokenizer: Any, batch: Sequence[Row], rows: Sequence[Row], share: float, rng: random.Random
               ) -> list[tuple[Any, Any]]:
    """Perturbed negatives for a batch of step-labelled rows: for about ``share`` of them, one right step (after a
    right prefix) replaced by a wrong step of a kind the policy rarely writes
    (:func:`prm.evaluation.perturbations.training_negative`), labelled wrong, the solution cut after it."""
    out = []
    for question, steps, labels in batch:
        right = 0
        while right < len(steps) and labels[right] is not None and float(labels[right]) >= 0.5:
            right += 1
        if not right or rng.random() >= share:
            continue
        k = rng.randrange(right)
        donor = rows[rng.randrange(len(rows))][1]
        _, step = training_negative(steps[:k], steps[k], steps[k + 1] if k + 1 < right else None,
                                    rng.choice(donor) if donor else None, rng)
        out.append((encode_solution(tokenizer, question, [*steps[:k], step]), [*labels[:k], 0.0]))
    return out


@dataclass
class Fitted:
    """A fine-tuned LM-head model and what its run cost."""

    model: Any
    ref: Any  # the frozen model the log-ratios are read against
    tokenizer: Any
    loss_history: list[list[float]]  # [step, loss] every 10 steps
    train_tokens: int  # token positions read (padding excluded), reference passes not counted
    seconds: float


def fit_implicit(rows: Sequence[tuple[str, Sequence[str], Any]], config: ImplicitPRMConfig,
                 progress: Callable[[str], None] | None = None) -> Fitted:
    """Fine-tune ``config.base_model`` (scored against ``config.reference`` or the base) on (question, steps,
    target) rows: the target is the solution's outcome (``labels="outcome"``) or one label per step (a bool or a
    soft P(good); None for unlabelled)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from prm.models import resolve_model

    rows = [r for r in rows if r[1]]
    flat = [float(t) >= 0.5 for r in rows for t in ([r[2]] if config.labels == "outcome" else r[2]) if t is not None]
    if not any(flat) or all(flat):
        raise ValueError(f"an implicit PRM learns from {config.labels} labels: pass both right and wrong ones")
    torch.set_num_threads(config.torch_threads)
    torch.manual_seed(config.seed)
    base = str(resolve_model(config.base_model))
    tokenizer = AutoTokenizer.from_pretrained(base)
    reference = config.reference or config.base_model
    if reference != config.base_model and model_tokenizer_digest(reference) != tokenizer_digest(tokenizer):
        raise ValueError(f"the reference {reference} has another tokenizer than the base {config.base_model}: the "
                         "log-ratios would compare different text; pick a reference with the base's tokenizer")
    model = AutoModelForCausalLM.from_pretrained(base, dtype=torch.float32)
    ref = AutoModelForCausalLM.from_pretrained(str(resolve_model(reference)), dtype=torch.float32).eval()
    device = "cuda" if torch.cuda.is_available() else "cpu"  # fp32 on either: the log-ratio is a small difference
    model.to(device)
    ref.to(device)
    encoded = [(encode_solution(tokenizer, q, steps), target) for q, steps, target in rows]
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay)
    warmup = max(config.warmup_steps, 0)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / (warmup + 1)))
    order: list[int] = []
    rng = random.Random(config.seed)
    neg_rng = random.Random(f"negatives-{config.seed}")  # its own stream: the data order is the same without it
    losses: list[list[float]] = []
    tokens, started = 0, time.perf_counter()
    every = max(1, min(50, config.max_steps // 10))  # ~10 progress lines per run, at most every 50 steps
    model.train()
    for step in range(config.max_steps):
        if len(order) < config.batch_size:
            order += rng.sample(range(len(encoded)), len(encoded))
        take, order = order[: config.batch_size], order[config.batch_size:]
        batch = [encoded[i] for i in take]
        if config.negatives:
            batch += _negatives(tokenizer, [rows[i] for i in take], rows, config.negatives, neg_rng)
        optimizer.zero_grad()
        loss = _accumulate(model, ref, batch, config, vocab=int(model.config.vocab_size))
        optimizer.step()
        schedule.step()
        tokens += sum(len(e.input_ids) for e, _ in batch)
        if (step + 1) % 10 == 0 or step + 1 == config.max_steps:
            losses.append([step + 1, round(loss.item(), 6)])
        if progress and ((step + 1) % every == 0 or step + 1 == config.max_steps):
            elapsed = time.perf_counter() - started
            eta = elapsed / (step + 1) * (config.max_steps - step - 1)
            progress(f"implicit PRM ({config.labels} labels) step {step + 1}/{config.max_steps}: "
                     f"loss {loss.item():.4f}, ETA {eta:.0f} s")
    model.eval()
    return Fitted(model, ref, tokenizer, losses, tokens, time.perf_counter() - started)


def save_implicit(fitted: Fitted, out: Path, config: ImplicitPRMConfig, ood_ref_logprob: float | None = None
                  ) -> None:
    """Weights, tokenizer and the recipe file (what marks the folder as an LM-head PRM, naming its reference and
    the digest of the tokenizer scored against it (fit_implicit checked the reference shares it), with the
    off-policy limit measured on its train steps: prm.training.lm_head.ood_limit)."""
    out.mkdir(parents=True, exist_ok=True)
    fitted.model.save_pretrained(out)
    fitted.tokenizer.save_pretrained(out)
    recipe = {**asdict(config), "reference": config.reference or config.base_model,
              "ood_ref_logprob": ood_ref_logprob, REFERENCE_TOKENIZER_KEY: tokenizer_digest(fitted.tokenizer)}
    atomic_write_text(out / IMPLICIT_CONFIG_FILE, json.dumps(recipe, indent=1))


def train_implicit_prm(rows: Sequence[tuple[str, Sequence[str], Any]], out_dir: str | Path,
                       config: ImplicitPRMConfig | None = None,
                       progress: Callable[[str], None] | None = None) -> Path:
    """:func:`fit_implicit` on ``rows``, saved (HF folder and ``implicit_prm.json``) in ``out_dir``."""
    config = config or ImplicitPRMConfig()
    out = Path(out_dir)
    fitted = fit_implicit(rows, config, progress)
    check_finite_weights(fitted.model, out, {"learning_rate": config.learning_rate,
                                             "weight_decay": config.weight_decay, "beta": config.beta})
    save_implicit(fitted, out, config)
    return out
