"""Fine-tune the judge: LoRA on SmolLM2 over balanced judge examples, a held-out evaluation, the adapter and a card."""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from prm.files import atomic_write_text
from prm.generation import cpu_has_native_bf16
from prm.judge_training.config import JUDGE_EVAL_SEED, JUDGE_TRAIN_SEED, JudgeTrainConfig
from prm.judge_training.data import JudgeExample, balance, examples
from prm.labeling import JudgeConfig, parse_vote
from prm.metrics import first_error_accuracies, harmonic_mean
from prm.models import JUDGE_CARD_FILE, adapter_digest, load_tokenizer, prompter_for, resolve_model
from prm.tasks import ArithmeticConfig, generate_problems

IGNORE_INDEX = -100  # label of every prompt token: the loss reads the verdict only
Progress = Callable[[str], None]


def judge_examples(config: JudgeTrainConfig, split: str) -> list[JudgeExample]:
    """The policy's samples of fresh word problems (``train`` or ``eval`` seeds, never the same problems),
    balanced by first-error position."""
    import torch
    from transformers import AutoModelForCausalLM

    from prm.policy import sample_solutions

    n, base = ((config.problems_per_ops, JUDGE_TRAIN_SEED) if split == "train"
               else (config.eval_problems_per_ops, JUDGE_EVAL_SEED))
    problems = [p for ops in config.ops for p in generate_problems(
        n, ArithmeticConfig(n_ops=ops, operators="+-", max_value=9, style="word"), seed=base + 100 * config.seed + ops)]
    policy = resolve_model(config.policy)
    model = AutoModelForCausalLM.from_pretrained(str(policy))
    torch.manual_seed(config.seed)
    samples = sample_solutions(model, load_tokenizer(str(policy)), problems, config.samples_per_problem, 1.0,
                               config.seed + (0 if split == "train" else 1))
    return balance(examples(problems, samples), config.seed)


def encode(tokenizer: Any, prompt: Callable[[str], str], example: JudgeExample, max_length: int
           ) -> tuple[list[int], list[int]]:
    """(input ids, labels) of one example: the chat-formatted judge prompt, then the verdict and EOS; labels
    ignore the prompt. An example longer than ``max_length`` is cut from the left of the prompt."""
    head = tokenizer(prompt(example.prompt), add_special_tokens=False).input_ids
    tail = [*tokenizer(example.target, add_special_tokens=False).input_ids, tokenizer.eos_token_id]
    head = head[max(0, len(head) + len(tail) - max_length):]
    return head + tail, [IGNORE_INDEX] * len(head) + tail


def _batches(lengths: Sequence[int], size: int, steps: int, seed: int, pool: int = 16) -> list[list[int]]:
    """``steps`` batches of ``size`` indices from seeded passes over the examples, each a fresh shuffle; within a
    pass, every ``pool`` batches' worth of examples are grouped by length, so a batch pads little (a third of the
    tokens of a random batch of 2-8-step solutions were padding).

    >>> lengths = [50, 10, 40, 20, 30, 60]
    >>> batches = _batches(lengths, size=2, steps=3, seed=0, pool=3)
    >>> sorted(i for b in batches for i in b), sorted(abs(lengths[a] - lengths[b]) for a, b in batches)
    ([0, 1, 2, 3, 4, 5], [10, 10, 10])
    """
    rng, out = random.Random(seed), []
    while len(out) < steps:
        order = list(range(len(lengths)))
        rng.shuffle(order)
        group: list[list[int]] = []
        for start in range(0, len(order), size * pool):
            chunk = sorted(order[start: start + size * pool], key=lambda i: lengths[i])
            group += [chunk[i: i + size] for i in range(0, len(chunk), size)]
        rng.shuffle(group)
        out += group
    return out[:steps]


def train_judge(config: JudgeTrainConfig, out: str | Path, progress: Progress = print) -> Path:
    """Train the adapter into ``out`` (``adapter_config.json``, ``adapter_model.safetensors``) with a card: the
    config, data counts, the loss curve, the held-out table and the adapter's digest."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    torch.set_num_threads(config.torch_threads)
    torch.manual_seed(config.seed)
    out = Path(out)
    started = time.perf_counter()
    train_rows, eval_rows = judge_examples(config, "train"), judge_examples(config, "eval")
    if not train_rows or not eval_rows:
        raise ValueError(f"balanced judge data has {len(train_rows)} train and {len(eval_rows)} held-out solutions: "
                         "the policy wrote no wrong (or no right) solution; raise problems_per_ops or use longer ops")
    progress(f"judge data: {len(train_rows)} train, {len(eval_rows)} held-out solutions (balanced)")
    base = resolve_model(config.base_model)
    tokenizer = load_tokenizer(str(base))
    prompt = prompter_for(tokenizer)
    encoded = [encode(tokenizer, prompt, row, config.max_length) for row in train_rows]
    model = AutoModelForCausalLM.from_pretrained(str(base), dtype=torch.float32)
    model = get_peft_model(model, LoraConfig(r=config.lora_r, lora_alpha=config.lora_alpha, lora_dropout=0.0,
                                             target_modules=list(config.target_modules), task_type="CAUSAL_LM"))
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=config.learning_rate, weight_decay=0.0)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: min(1.0, (s + 1) / config.warmup_steps) * max(
        0.0, 1.0 - s / config.max_steps))
    bf16 = torch.cuda.is_available() or cpu_has_native_bf16()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model.to(device).train()
    curve: list[dict[str, float]] = []
    lengths = [len(ids) for ids, _ in encoded]
    for step, batch in enumerate(_batches(lengths, config.batch_size, config.max_steps, config.seed), 1):
        ids, mask, labels = _pad([encoded[i] for i in batch], tokenizer.pad_token_id or tokenizer.eos_token_id)
        with torch.autocast(device, dtype=torch.bfloat16, enabled=bf16):
            loss = model(input_ids=ids.to(device), attention_mask=mask.to(device), labels=labels.to(device)).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()
        curve.append({"step": step, "loss": float(loss.detach())})
        if step % 10 == 0 or step == config.max_steps:
            elapsed = time.perf_counter() - started
            recent = sum(c["loss"] for c in curve[-10:]) / len(curve[-10:])
            progress(f"judge step {step}/{config.max_steps} loss {recent:.3f} "
                     f"(ETA {elapsed / step * (config.max_steps - step):.0f} s at this pace)")
    save_adapter(model, out)
    merged = model.merge_and_unload().eval()
    table = evaluate_judge(merged, tokenizer, eval_rows, progress=progress)
    card = {"config": config.to_dict(), "train_solutions": len(train_rows), "eval_solutions": len(eval_rows),
            "curve": curve, "eval": table, "digest": adapter_digest(out),
            "train_s": round(time.perf_counter() - started, 1)}
    atomic_write_text(out / JUDGE_CARD_FILE, json.dumps(card, indent=1))
    return out


def _pad(rows: Sequence[tuple[list[int], list[int]]], pad_id: int) -> tuple[Any, Any, Any]:
    """(ids, attention mask, labels), right-padded to the longest row."""
    import torch

    width = max(len(ids) for ids, _ in rows)
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    labels = torch.full((len(rows), width), IGNORE_INDEX, dtype=torch.long)
    for i, (a, b) in enumerate(rows):
        ids[i, : len(a)], mask[i, : len(a)], labels[i, : len(b)] = torch.tensor(a), 1, torch.tensor(b)
    return ids, mask, labels


def evaluate_judge(model: Any, tokenizer: Any, rows: Sequence[JudgeExample], *, batch_size: int = 16,
                   max_new_tokens: int = JudgeConfig().max_tokens, progress: Progress = print) -> dict[str, Any]:
    """Greedy verdicts on ``rows``: coverage (share with a parsed index), first-error accuracy on wrong solutions,
    accuracy on right ones, their harmonic mean (ProcessBench F1) and generated tokens per step."""
    import torch

    prompt = prompter_for(tokenizer)
    side, tokenizer.padding_side = tokenizer.padding_side, "left"
    votes, generated = [], 0
    try:
        for start in range(0, len(rows), batch_size):
            chunk = rows[start : start + batch_size]
            enc = tokenizer([prompt(r.prompt) for r in chunk], return_tensors="pt", padding=True,
                            add_special_tokens=False)
            with torch.no_grad():
                out = model.generate(**enc, max_new_tokens=max_new_tokens, do_sample=False,
                                     pad_token_id=tokenizer.pad_token_id or tokenizer.eos_token_id)
            new = out[:, enc.input_ids.shape[1]:]
            for row, ids in zip(chunk, new, strict=True):
                text = tokenizer.decode(ids, skip_special_tokens=True)
                generated += int((ids != (tokenizer.pad_token_id or tokenizer.eos_token_id)).sum())
                votes.append(parse_vote(text, row.n_steps).index)
            progress(f"judge eval {min(start + batch_size, len(rows))}/{len(rows)}")
    finally:
        tokenizer.padding_side = side
    return verdict_table(rows, votes, generated)


def verdict_table(rows: Sequence[JudgeExample], votes: Sequence[int | None], generated_tokens: int) -> dict[str, Any]:
    """The held-out numbers of one set of verdicts (None = abstained) against exact first errors.

    >>> rows = [JudgeExample("p", "q", ("s",) * 4, "t", e) for e in (-1, 2, 1, -1)]
    >>> t = verdict_table(rows, [-1, 2, None, 0], 40)
    >>> t["coverage"], t["first_error_acc"], t["correct_acc"], t["processbench_f1"], t["tokens_per_step"]
    (0.75, 0.5, 0.5, 0.5, 2.5)
    """
    truth = {str(i): r.first_error for i, r in enumerate(rows)}
    err, ok = first_error_accuracies({str(i): v for i, v in enumerate(votes)}, truth)
    f1 = harmonic_mean(err, ok)
    steps = sum(r.n_steps for r in rows)
    return {"solutions": len(rows), "coverage": sum(v is not None for v in votes) / max(len(rows), 1),
            "first_error_acc": err, "correct_acc": ok, "processbench_f1": f1,
            "tokens_per_step": generated_tokens / max(steps, 1)}


def save_adapter(model: Any, out: Path) -> None:
    """The LoRA adapter (peft's files) with its weights stored in bf16: half the bytes to ship, and the merged
    judge differs from the fp32 one by bf16 rounding of the low-rank update only."""
    from safetensors.torch import load_file, save_file

    model.save_pretrained(str(out))
    (out / "README.md").unlink(missing_ok=True)  # peft's placeholder model card; judge_card.json is the card
    weights = out / "adapter_model.safetensors"
    save_file({k: v.bfloat16() for k, v in load_file(str(weights)).items()}, str(weights))
