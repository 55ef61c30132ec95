"""An implicit PRM (PRIME; Yuan et al. 2024, "Free Process Rewards without Process Labels"): the policy fine-tuned
on *outcome* labels alone, whose per-step reward is ``beta * log(pi(step) / pi_ref(step))``.

Training minimises the cross-entropy of ``sigmoid(beta * sum_t log pi(y_t) / pi_ref(y_t))`` against the
solution's outcome. It is a baseline that reads steps without step labels: a step-trained PRM that does not
beat it has not earned its labels.
"""

from __future__ import annotations

import logging
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch

from prm.evaluation.reading import encode_solution, token_logprobs

log = logging.getLogger(__name__)

IMPLICIT_SCORES = ("step", "prefix")  # sigmoid of one step's reward, or of the prefix's (the Q value)


@dataclass(frozen=True)
class ImplicitPRMConfig:
    """One implicit-PRM fine-tune; optimizer steps, never wall-clock time."""

    base_model: str = "arith-policy"
    beta: float = 0.05  # PRIME's reward scale
    learning_rate: float = 5e-4
    max_steps: int = 400
    batch_size: int = 16
    seed: int = 0
    torch_threads: int = 1

    def __post_init__(self) -> None:
        if self.beta <= 0 or self.learning_rate <= 0 or self.max_steps <= 0 or self.batch_size <= 0:
            raise ValueError("beta, learning_rate, max_steps and batch_size must be > 0")


def _sequence_logratio(model: Any, ref: Any, batch: list[Any]) -> torch.Tensor:
    lp = token_logprobs(model, batch)
    with torch.no_grad():
        ref_lp = token_logprobs(ref, batch)
    return torch.stack([(a - b)[e.spans[0][0]: e.spans[-1][1]].sum() for a, b, e in zip(lp, ref_lp, batch,
                                                                                        strict=True)])


def train_implicit_prm(rows: Sequence[tuple[str, Sequence[str], bool]], out_dir: str | Path,
                       config: ImplicitPRMConfig | None = None,
                       progress: Callable[[str], None] | None = None) -> Path:
    """Fine-tune ``config.base_model`` on (question, steps, is_correct) rows; save it (HF folder) in ``out_dir``."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from prm.models import resolve_model

    config = config or ImplicitPRMConfig()
    rows = [r for r in rows if r[1]]
    if not any(r[2] for r in rows) or all(r[2] for r in rows):
        raise ValueError("an implicit PRM learns from outcomes: pass both right and wrong solutions")
    torch.set_num_threads(config.torch_threads)
    torch.manual_seed(config.seed)
    base = str(resolve_model(config.base_model))
    tokenizer = AutoTokenizer.from_pretrained(base)
    model = AutoModelForCausalLM.from_pretrained(base, dtype=torch.float32)
    ref = AutoModelForCausalLM.from_pretrained(base, dtype=torch.float32).eval()
    encoded = [(encode_solution(tokenizer, q, steps), float(ok)) for q, steps, ok in rows]
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.learning_rate, weight_decay=0.0)
    order: list[int] = []
    rng = random.Random(config.seed)
    model.train()
    for step in range(config.max_steps):
        if len(order) < config.batch_size:
            order += rng.sample(range(len(encoded)), len(encoded))
        take, order = order[: config.batch_size], order[config.batch_size:]
        batch = [encoded[i][0] for i in take]
        target = torch.tensor([encoded[i][1] for i in take])
        logit = config.beta * _sequence_logratio(model, ref, batch)
        loss = torch.nn.functional.binary_cross_entropy_with_logits(logit, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if progress and (step + 1) % 50 == 0:
            progress(f"implicit PRM step {step + 1}/{config.max_steps}: loss {loss.item():.4f}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    (out / "implicit_prm.json").write_text(__import__("json").dumps(asdict(config), indent=1))
    return out


def implicit_step_rewards(model: Any, ref: Any, tokenizer: Any, items: Sequence[tuple[str, Sequence[str]]], *,
                          beta: float, batch_size: int = 32) -> list[list[float]]:
    """Per solution, per step: ``beta * sum of log(pi / pi_ref)`` over the step's tokens."""
    out: list[list[float]] = []
    encoded = [encode_solution(tokenizer, q, steps) for q, steps in items]
    with torch.inference_mode():
        for i in range(0, len(encoded), batch_size):
            chunk = encoded[i: i + batch_size]
            for e, a, b in zip(chunk, token_logprobs(model, chunk), token_logprobs(ref, chunk), strict=True):
                out.append([beta * float((a - b)[s:t].sum()) for s, t in e.spans])
    return out


def implicit_scores(rewards: Sequence[Sequence[float]], how: str) -> list[list[float]]:
    """P(good)-like scores: sigmoid of each step's reward (``step``) or of the running sum (``prefix``).

    >>> implicit_scores([[0.0, math.log(3)]], "step"), implicit_scores([[0.0, math.log(3)]], "prefix")
    ([[0.5, 0.75]], [[0.5, 0.75]])
    """
    if how not in IMPLICIT_SCORES:
        raise ValueError(f"how={how!r} must be one of {IMPLICIT_SCORES}")
    out = []
    for steps in rewards:
        running, scores = 0.0, []
        for r in steps:
            running += r
            x = r if how == "step" else running
            scores.append(1.0 / (1.0 + math.exp(-x)))
        out.append(scores)
    return out
