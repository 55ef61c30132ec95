"""Train the warm-start policy from scratch on gold demonstrations, for a fixed number of optimizer steps.

The HF ``Trainer`` runs the loop for ``max_steps``. A stop rule samples held-out ``eval_ops``-step problems
every ``eval_every_steps`` steps and ends training early once the policy is good enough (per-step error
below ``stop_step_error_below`` or accuracy above ``stop_accuracy_above``), so it keeps making the mistakes
that Monte-Carlo step labels need. Nothing depends on wall-clock time: the same config and seed give the
same weights on an idle or a busy machine, only slower.
"""

from __future__ import annotations

import json
import logging
import math
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch
from transformers import (
    AutoTokenizer,
    GenerationConfig,
    PreTrainedTokenizerBase,
    Trainer,
    TrainerCallback,
    TrainingArguments,
    set_seed,
)

from prm.format import PLAIN_PROMPT_SUFFIX
from prm.policy.card import model_card_markdown, read_card, weight_digests
from prm.policy.config import PolicyTrainConfig
from prm.policy.constants import CARD_FILE
from prm.policy.data import DemonstrationDataset, PadCollator, training_problems
from prm.policy.evaluate import EvalTable, default_device, evaluate_model
from prm.policy.model import build_model
from prm.policy.tokenizer import build_char_tokenizer
from prm.tasks import ArithmeticConfig, ArithmeticProblem, generate_problems

log = logging.getLogger(__name__)

# Seed offsets that keep held-out problems apart from the training pool (drawn with ``seed``).
STOP_RULE_SEED_OFFSET = 10_007
CARD_EVAL_SEED_OFFSET = 20_011
# Final evaluation written to the card: problems per difficulty and samples per problem at temperature 1.
CARD_EVAL_PROBLEMS = 12
CARD_EVAL_SAMPLES = 4


def _step_cosine(config: PolicyTrainConfig):
    """LR multiplier: linear warmup, then cosine over ``max_steps`` down to ``min_lr_ratio``."""

    def factor(step: int) -> float:
        warm = min(1.0, (step + 1) / max(config.warmup_steps, 1))
        progress = min(1.0, step / config.max_steps)
        cosine = 0.5 * (1.0 + math.cos(math.pi * progress))
        return warm * (config.min_lr_ratio + (1.0 - config.min_lr_ratio) * cosine)

    return factor


@dataclass
class _StopRule(TrainerCallback):
    """Ends training when the held-out evaluation (every ``eval_every_steps``) says the policy is good enough."""

    config: PolicyTrainConfig
    tokenizer: PreTrainedTokenizerBase
    problems: list[ArithmeticProblem]
    start: float
    history: list[dict] = field(default_factory=list)
    stopped_by: str = "max_steps"

    def on_step_end(self, args, state, control, model=None, **kwargs):
        if state.global_step % self.config.eval_every_steps or model is None:
            return control
        table = evaluate_model(
            model, self.tokenizer, self.problems, self.config.eval_samples, 1.0, seed=state.global_step
        )
        row = table.row(self.config.eval_ops)
        entry = {
            "step": state.global_step,
            "elapsed_s": round(time.monotonic() - self.start, 1),  # informational only; never a stop reason
            "answer_accuracy": row.answer_accuracy,
            "step_error_rate": row.step_error_rate,
            "mixed_share": row.mixed_share,
        }
        self.history.append(entry)
        log.warning("policy stop-rule eval: %s", entry)
        if row.step_error_rate < self.config.stop_step_error_below:
            self.stopped_by, control.should_training_stop = "step_error_below", True
        elif row.answer_accuracy > self.config.stop_accuracy_above:
            self.stopped_by, control.should_training_stop = "accuracy_above", True
        return control


def card_eval_problems(config: PolicyTrainConfig) -> list[ArithmeticProblem]:
    """Held-out problems for the card: ``CARD_EVAL_PROBLEMS`` per difficulty and style."""
    problems = []
    for ops in range(config.min_ops, config.max_ops + 1):
        for style in config.styles:
            task = ArithmeticConfig(n_ops=ops, operators=config.operators, max_value=config.max_value, style=style)
            problems += generate_problems(CARD_EVAL_PROBLEMS, task, seed=config.seed + CARD_EVAL_SEED_OFFSET + ops)
    return problems


def build_policy(out_dir: str | Path, config: PolicyTrainConfig | None = None, *, force: bool = False) -> Path:
    """Train the policy and save a HuggingFace folder (plus ``policy_card.json``) at ``out_dir``.

    Cached: a folder whose card carries the same :meth:`PolicyTrainConfig.config_hash` is returned as is
    (``force`` retrains anyway, e.g. to check that a rebuild reproduces the weights).
    Torch runs on ``config.torch_threads`` CPU threads for the build and is restored afterwards.

    Example (trains for up to ``max_steps`` optimizer steps)::

        path = build_policy("models/arith-policy", PolicyTrainConfig())
    """
    config = config or PolicyTrainConfig()
    out = Path(out_dir)
    card = read_card(out)
    cached = card is not None and card.get("config_hash") == config.config_hash() and (out / "config.json").is_file()
    if cached and not force:
        log.warning("policy at %s matches config %s; reusing it", out, config.config_hash())
        return out
    threads = torch.get_num_threads()
    torch.set_num_threads(config.torch_threads)
    try:
        return _train_and_save(out, config)
    finally:
        torch.set_num_threads(threads)


def _train_and_save(out: Path, config: PolicyTrainConfig) -> Path:
    set_seed(config.seed)
    tokenizer = build_char_tokenizer()
    model = build_model(config, tokenizer).to(default_device())
    dataset = DemonstrationDataset(training_problems(config, config.n_train_problems, config.seed), tokenizer)
    stop_task = ArithmeticConfig(
        n_ops=config.eval_ops, operators=config.operators, max_value=config.max_value, style=config.styles[0]
    )
    stop_problems = generate_problems(config.eval_problems, stop_task, config.seed + STOP_RULE_SEED_OFFSET)

    start = time.monotonic()
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, _step_cosine(config))
    stop_rule = _StopRule(config, tokenizer, stop_problems, start)
    with tempfile.TemporaryDirectory(prefix="policy-trainer-") as scratch:
        args = TrainingArguments(
            output_dir=scratch,  # nothing is checkpointed; the final model is saved below
            max_steps=config.max_steps,
            per_device_train_batch_size=config.batch_size,
            logging_steps=config.logging_steps,
            save_strategy="no",
            report_to="none",
            seed=config.seed,
            train_sampling_strategy="group_by_length",  # similar lengths per batch: less padding compute
            dataloader_num_workers=0,
            use_cpu=not torch.cuda.is_available(),
        )
        trainer = Trainer(
            model=model,
            args=args,
            train_dataset=dataset,
            data_collator=PadCollator(tokenizer.pad_token_id),
            optimizers=(optimizer, scheduler),
            callbacks=[stop_rule],
        )
        result = trainer.train()
    train_seconds = time.monotonic() - start

    table = evaluate_model(model, tokenizer, card_eval_problems(config), CARD_EVAL_SAMPLES, 1.0, config.seed)
    _save(out, model, tokenizer, config, train_seconds, result.global_step, stop_rule, table)
    return out


def _save(out, model, tokenizer, config, train_seconds, steps, stop_rule: _StopRule, table: EvalTable) -> None:
    """Write the folder atomically: into a sibling, then swap it in, so a crash never leaves half a policy."""
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    model.save_pretrained(staging)
    # A fresh tokenizer: the one used for sampling carries left-padding state into tokenizer.json.
    build_char_tokenizer().save_pretrained(staging)
    GenerationConfig(
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        do_sample=True,
        temperature=1.0,  # the policy is meant to be sampled; its mistakes are the point
    ).save_pretrained(staging)
    card = {
        "config_hash": config.config_hash(),
        "config": config.to_dict(),
        "prompt_format": "question + " + json.dumps(PLAIN_PROMPT_SUFFIX) + " (the tokenizer adds <s>)",
        "num_parameters": model.num_parameters(),
        "train_seconds": round(train_seconds, 1),
        "train_steps": steps,
        "stopped_by": stop_rule.stopped_by,
        "stop_rule_history": stop_rule.history,
        "eval": table.to_dict(),
        "eval_markdown": table.to_markdown(),
        "torch_version": torch.__version__,
        "weights_sha256": weight_digests(staging),
    }
    (staging / CARD_FILE).write_text(json.dumps(card, indent=2) + "\n")
    (staging / "README.md").write_text(model_card_markdown(card))
    AutoTokenizer.from_pretrained(str(staging))  # fail here, not in vLLM, if the folder is not loadable
    if out.exists():
        shutil.rmtree(out)
    staging.rename(out)
