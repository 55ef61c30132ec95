"""Tokenizers of registered models, loaded once per process, and prompt builders bound to a model by name."""

from __future__ import annotations

import functools
import os
from typing import Any

from prm.format import DEFAULT_TEMPLATE, Prompter, PromptTemplate
from prm.models.registry import resolve_model


@functools.lru_cache(maxsize=8)
def load_tokenizer(name: str) -> Any:
    """The tokenizer of model ``name`` (any name :func:`resolve_model` accepts); cached per process."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(resolve_model(name)))


def prompter_for(model: str | os.PathLike[str] | Any, template: PromptTemplate = DEFAULT_TEMPLATE) -> Prompter:
    """:class:`prm.format.Prompter` for a model name or folder (its tokenizer through :func:`load_tokenizer`), or for
    a tokenizer object as it is, under ``template`` (system prompt and answer-format instruction)."""
    return Prompter(load_tokenizer(str(model)) if isinstance(model, str | os.PathLike) else model, template)
