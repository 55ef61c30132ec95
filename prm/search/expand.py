"""Expansions: continuations of a prefix, from the generation backend (or a scripted stand-in in unit tests)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from prm.generation import GenerationBackend, rollouts_from_prefixes

# The finish reason of a sample the token limit cut (prm.generation.types.Completion.finish_reasons).
_FINISH_LENGTH = "length"


@dataclass(frozen=True)
class Expansion:
    """One sampled continuation: its text (a stop string is not included), tokens paid, and whether the token
    limit cut it."""

    text: str
    tokens: int
    truncated: bool = False


class Expander(Protocol):
    """``n`` continuations of every prompt, in prompt order; ``[]`` for a prompt whose request failed.

    The product path is :class:`BackendExpander`; unit tests pass a scripted callable with this signature.
    """

    def __call__(self, prompts: Sequence[str], n: int, *, stop: Sequence[str], max_tokens: int,
                 temperature: float, seed: int | None) -> list[list[Expansion]]: ...


class BackendExpander:
    """An :class:`Expander` over a :class:`GenerationBackend`: one batched call per round, so every beam of every
    problem is expanded together and vLLM's prefix cache reuses the prompt and shared step prefixes."""

    def __init__(self, backend: GenerationBackend) -> None:
        self.backend = backend

    def __call__(self, prompts: Sequence[str], n: int, *, stop: Sequence[str], max_tokens: int,
                 temperature: float, seed: int | None) -> list[list[Expansion]]:
        completions = rollouts_from_prefixes(self.backend, list(prompts), n, max_tokens=max_tokens,
                                             temperature=temperature, stop=stop, seed=seed)
        return [[Expansion(text, tokens, reason == _FINISH_LENGTH)
                 for text, tokens, reason in zip(c.texts, c.completion_tokens, c.finish_reasons, strict=True)]
                if c.ok else [] for c in completions]
