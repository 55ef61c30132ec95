"""The warm-start default policy: a tiny character-level Llama trained on arithmetic demonstrations."""

from prm.policy.card import card_problems, read_card, verify_weights, weight_digests
from prm.policy.config import PolicyTrainConfig
from prm.policy.constants import MAX_OPERAND
from prm.policy.evaluate import (
    EvalRow,
    EvalTable,
    default_device,
    evaluate_model,
    evaluate_policy,
    sample_solutions,
    score_samples,
)
from prm.policy.tokenizer import build_char_tokenizer
from prm.policy.train import build_policy

__all__ = [
    "MAX_OPERAND",
    "EvalRow",
    "EvalTable",
    "PolicyTrainConfig",
    "build_char_tokenizer",
    "build_policy",
    "card_problems",
    "default_device",
    "evaluate_model",
    "evaluate_policy",
    "read_card",
    "sample_solutions",
    "score_samples",
    "verify_weights",
    "weight_digests",
]
