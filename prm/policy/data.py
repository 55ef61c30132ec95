"""Gold demonstrations as causal-LM examples: prompt tokens masked, loss on the solution and ``</s>``."""

from __future__ import annotations

import random
from dataclasses import dataclass

import torch
from transformers import PreTrainedTokenizerBase

from prm.format import format_prompt
from prm.policy.config import PolicyTrainConfig
from prm.tasks import ArithmeticConfig, ArithmeticProblem, generate_problems

IGNORE_INDEX = -100  # label value torch's cross-entropy skips


def training_problems(config: PolicyTrainConfig, n: int, seed: int) -> list[ArithmeticProblem]:
    """``n`` problems over ``min_ops..max_ops`` (mixed by ``config.ops_mix``) and ``styles``, shuffled,
    reproducible by seed.

    >>> ps = training_problems(PolicyTrainConfig(min_ops=1, max_ops=2, ops_mix="uniform"), n=4, seed=0)
    >>> sorted(p.n_ops for p in ps)
    [1, 1, 2, 2]
    >>> ps = training_problems(PolicyTrainConfig(min_ops=1, max_ops=2), n=6, seed=0)
    >>> sorted(p.n_ops for p in ps)
    [1, 1, 2, 2, 2, 2]
    """
    buckets = [(ops, style) for ops in range(config.min_ops, config.max_ops + 1) for style in config.styles]
    weights = [ops if config.ops_mix == "proportional" else 1 for ops, _ in buckets]
    shares = [n * w // sum(weights) for w in weights]
    for i in range(n - sum(shares)):  # the rounding remainder goes to the first buckets
        shares[i % len(shares)] += 1
    problems: list[ArithmeticProblem] = []
    for i, ((ops, style), share) in enumerate(zip(buckets, shares, strict=True)):
        task = ArithmeticConfig(n_ops=ops, operators=config.operators, max_value=config.max_value, style=style)
        problems += generate_problems(share, task, seed=seed * 1000 + i)
    random.Random(seed).shuffle(problems)
    return problems


def encode_example(problem: ArithmeticProblem, tokenizer: PreTrainedTokenizerBase) -> dict[str, list[int]]:
    """``input_ids``/``labels`` for one demonstration; labels are ``IGNORE_INDEX`` over ``<s>`` + prompt.

    >>> from prm.policy.tokenizer import build_char_tokenizer
    >>> p = generate_problems(1, ArithmeticConfig(n_ops=1), seed=0)[0]
    >>> ex = encode_example(p, build_char_tokenizer())
    >>> sum(label != IGNORE_INDEX for label in ex["labels"]) == len(p.gold_solution()) + 1
    True
    """
    prompt = tokenizer(format_prompt(tokenizer, problem.question)).input_ids
    target = [*tokenizer(problem.gold_solution(), add_special_tokens=False).input_ids, tokenizer.eos_token_id]
    return {"input_ids": prompt + target, "labels": [IGNORE_INDEX] * len(prompt) + target}


class DemonstrationDataset(torch.utils.data.Dataset):
    """Pre-tokenized demonstrations (char-level encoding is cheap, so 100k examples take seconds)."""

    def __init__(self, problems: list[ArithmeticProblem], tokenizer: PreTrainedTokenizerBase) -> None:
        self.examples = [encode_example(p, tokenizer) for p in problems]

    def __len__(self) -> int:
        return len(self.examples)

    def __getitem__(self, index: int) -> dict[str, list[int]]:
        return self.examples[index]


@dataclass(frozen=True)
class PadCollator:
    """Right-pads a batch to its longest example; padding is masked in the attention and the loss."""

    pad_token_id: int

    def __call__(self, batch: list[dict[str, list[int]]]) -> dict[str, torch.Tensor]:
        width = max(len(ex["input_ids"]) for ex in batch)
        ids = torch.full((len(batch), width), self.pad_token_id, dtype=torch.long)
        labels = torch.full((len(batch), width), IGNORE_INDEX, dtype=torch.long)
        mask = torch.zeros((len(batch), width), dtype=torch.long)
        for row, ex in enumerate(batch):
            n = len(ex["input_ids"])
            ids[row, :n] = torch.tensor(ex["input_ids"])
            labels[row, :n] = torch.tensor(ex["labels"])
            mask[row, :n] = 1
        return {"input_ids": ids, "labels": labels, "attention_mask": mask}
