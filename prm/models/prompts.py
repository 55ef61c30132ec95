"""Prompt formatting: the model's chat template when it has one, else the plain question line."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from prm.models.registry import resolve_model


@functools.lru_cache(maxsize=8)
def load_tokenizer(name: str) -> Any:
    """The tokenizer of model ``name`` (any name :func:`resolve_model` accepts); cached per process."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(resolve_model(name)))


def format_prompt(tokenizer_or_model: Any, question: str) -> str:
    """The prompt a policy sees for ``question``.

    ``tokenizer_or_model`` is a tokenizer object or a model name/path. With a chat template (SmolLM2)
    the question becomes one user turn plus the assistant header; without one (arith-policy, trained on
    raw text) it is ``question + "\\n"``.

    >>> class Plain:
    ...     chat_template = None
    >>> format_prompt(Plain(), "12+7-3*2 =")
    '12+7-3*2 =\\n'
    """
    tokenizer = (
        load_tokenizer(str(tokenizer_or_model)) if isinstance(tokenizer_or_model, str | Path) else (tokenizer_or_model)
    )
    if getattr(tokenizer, "chat_template", None):
        return tokenizer.apply_chat_template(
            [{"role": "user", "content": question}], tokenize=False, add_generation_prompt=True
        )
    return question + "\n"
