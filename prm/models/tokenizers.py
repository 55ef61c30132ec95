"""Tokenizers of registered models, loaded once per process (prompts are built by :mod:`prm.format`)."""

from __future__ import annotations

import functools
from typing import Any

from prm.models.registry import resolve_model


@functools.lru_cache(maxsize=8)
def load_tokenizer(name: str) -> Any:
    """The tokenizer of model ``name`` (any name :func:`resolve_model` accepts); cached per process."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(resolve_model(name)))
