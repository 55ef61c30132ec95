"""Baselines that read the steps with no step labels: the policy's log-likelihood of each step, and an implicit
PRM (PRIME: a policy fine-tuned on outcome labels, scored against its reference).

Both run a causal LM over ``format_prompt(question)`` + the steps joined by newlines (the policy's own solution
layout) and read the log-probability of each step's tokens (the step and its newline) given everything before.
Tokens are assigned to steps by character offsets, so any fast tokenizer works, not only the char-level one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch

from prm.format import format_prompt

STEP_SEP = "\n"  # the policy writes one step per line
LOGLIK_AGGREGATIONS = ("mean", "min")  # per-token mean (a geometric-mean probability) or the least likely token


@dataclass(frozen=True)
class Encoded:
    """Token ids of prompt + steps and, per step, the [start, end) token span its characters (and newline) own."""

    input_ids: list[int]
    spans: list[tuple[int, int]]


def encode_solution(tokenizer: Any, question: str, steps: Sequence[str]) -> Encoded:
    """The policy layout of one solution with the token span of each step.

    >>> from prm.policy import build_char_tokenizer
    >>> e = encode_solution(build_char_tokenizer(), "1+2", ["1+2 = 3"])
    >>> e.spans  # <s>, "1+2", "\\n" come first; the step is 7 characters and its newline
    [(5, 13)]
    """
    prompt = format_prompt(tokenizer, question)
    bounds, text = [], prompt
    for step in steps:
        start = len(text)
        text += step + STEP_SEP
        bounds.append((start, len(text)))
    enc = tokenizer(text, return_offsets_mapping=True)
    offsets = enc["offset_mapping"]
    spans = []
    for start, end in bounds:
        owned = [i for i, (a, b) in enumerate(offsets) if b > a and start <= a < end]
        if not owned:
            raise ValueError(f"step {len(spans)} of {question[:40]!r}... has no tokens of its own: the tokenizer "
                             "merged it into its neighbour; score it with a tokenizer that splits at newlines")
        spans.append((owned[0], owned[-1] + 1))
    return Encoded(list(enc["input_ids"]), spans)


def right_padded(token_ids: Sequence[Sequence[int]]) -> tuple[torch.Tensor, torch.Tensor]:
    """``(ids, attention_mask)`` of sequences right-padded with 0 to the longest: a causal model's outputs at every
    real position are those of the unpadded sequence.

    >>> ids, mask = right_padded([[5, 6], [7]])
    >>> ids.tolist(), mask.tolist()
    ([[5, 6], [7, 0]], [[1, 1], [1, 0]])
    """
    width = max(len(t) for t in token_ids)
    ids = torch.zeros((len(token_ids), width), dtype=torch.long)
    mask = torch.zeros((len(token_ids), width), dtype=torch.long)
    for b, t in enumerate(token_ids):
        ids[b, : len(t)] = torch.tensor(list(t), dtype=torch.long)
        mask[b, : len(t)] = 1
    return ids, mask


def token_logprobs(model: Any, batch: Sequence[Encoded]) -> list[torch.Tensor]:
    """Per solution, the log-probability of each token given the ones before it (position 0 gets 0)."""
    ids, mask = right_padded([e.input_ids for e in batch])
    device = next(model.parameters()).device
    logits = model(input_ids=ids.to(device), attention_mask=mask.to(device)).logits.float()
    picked = torch.log_softmax(logits[:, :-1], dim=-1).gather(-1, ids[:, 1:, None].to(device))[..., 0]
    picked = torch.cat([torch.zeros((len(batch), 1), device=device), picked], dim=1)
    return [picked[b, : len(e.input_ids)] for b, e in enumerate(batch)]


def step_logliks(model: Any, tokenizer: Any, items: Sequence[tuple[str, Sequence[str]]], *,
                 batch_size: int = 32) -> list[list[tuple[float, float, int]]]:
    """Per solution, per step: (sum, min, count) of its tokens' log-probabilities under ``model``."""
    out: list[list[tuple[float, float, int]]] = []
    encoded = [encode_solution(tokenizer, q, steps) for q, steps in items]
    with torch.inference_mode():
        for i in range(0, len(encoded), batch_size):
            chunk = encoded[i: i + batch_size]
            for e, lp in zip(chunk, token_logprobs(model, chunk), strict=True):
                out.append([(float(lp[a:b].sum()), float(lp[a:b].min()), b - a) for a, b in e.spans])
    return out


def loglik_scores(logliks: Sequence[Sequence[tuple[float, float, int]]], how: str) -> list[list[float]]:
    """P(good)-like step scores in [0, 1] from :func:`step_logliks`: exp of the mean or the min token log-prob.

    >>> loglik_scores([[(math.log(0.25), math.log(0.25), 2)]], "mean"), loglik_scores([[(-1.0, -2.0, 2)]], "min")
    ([[0.5]], [[0.1353352832366127]])
    """
    if how not in LOGLIK_AGGREGATIONS:
        raise ValueError(f"how={how!r} must be one of {LOGLIK_AGGREGATIONS}")
    pick = (lambda s, m, n: s / n) if how == "mean" else (lambda s, m, n: m)
    return [[math.exp(pick(*step)) for step in steps] for steps in logliks]
