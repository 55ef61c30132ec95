"""The recipe an LM-head PRM folder carries (``implicit_prm.json``: the reference model, ``beta``, the labels,
the reference floor and off-policy limit, the reference tokenizer's digest), read and checked in one place for
training (which writes it), scoring and RL (which read it), and the tokenizer digests it records."""

from prm.implicit_recipe.recipe import (
    IMPLICIT_CONFIG_FILE,
    IMPLICIT_LABELS,
    REFERENCE_TOKENIZER_KEY,
    check_beta,
    check_reference_tokenizer,
    model_tokenizer_digest,
    read_recipe,
    read_scoring_rule,
    tokenizer_digest,
)

__all__ = [
    "IMPLICIT_CONFIG_FILE",
    "IMPLICIT_LABELS",
    "REFERENCE_TOKENIZER_KEY",
    "check_beta",
    "check_reference_tokenizer",
    "model_tokenizer_digest",
    "read_recipe",
    "read_scoring_rule",
    "tokenizer_digest",
]
