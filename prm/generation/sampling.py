"""The two calls the pipeline makes: full solutions for questions, and rollouts from step prefixes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from prm.generation.backend import GenerationBackend
from prm.generation.types import Completion, GenerationRequest


def sample_solutions(
    backend: GenerationBackend,
    prompts: Sequence[str],
    n: int,
    *,
    max_tokens: int = 256,
    temperature: float = 1.0,
    top_p: float = 1.0,
    stop: Sequence[str] = (),
    seed: int | None = None,
) -> list[Completion]:
    """``n`` solutions per formatted prompt (see ``prm.format.format_prompt``), one row per prompt.

    ``seed`` fixes request ``i`` to ``seed + i * n``; ``None`` derives seeds from the config seed.
    """
    requests = _requests(prompts, n, max_tokens, temperature, top_p, stop, seed)
    return backend.generate(requests)


def rollouts_from_prefixes(backend: GenerationBackend, prefixes: Sequence[str], n: int, **sampling: Any
                           ) -> list[Completion]:
    """``n`` continuations of each step prefix: the Monte-Carlo labelers' primitive. ``sampling`` takes the keywords
    of :func:`sample_solutions` (``max_tokens``, ``temperature``, ``top_p``, ``stop``, ``seed``).

    A prefix is the formatted prompt followed by the model's own text up to the end of a step, rendered
    from stored spans (``prm.datagen.prefix_target``); the text returned is only the continuation. All
    prefixes of one solution share the prompt, and prefix caching reuses its KV.
    """
    return sample_solutions(backend, prefixes, n, **sampling)


def _requests(
    prompts: Sequence[str],
    n: int,
    max_tokens: int,
    temperature: float,
    top_p: float,
    stop: Sequence[str],
    seed: int | None,
) -> list[GenerationRequest]:
    if isinstance(prompts, str):
        raise TypeError("prompts must be a sequence of strings, not one string; wrap it in a list")
    return [
        GenerationRequest(
            prompt=prompt,
            n=n,
            max_tokens=max_tokens,
            temperature=temperature,
            top_p=top_p,
            stop=tuple(stop),
            # Spaced by n: vLLM seeds sample j of a request with seed + j.
            seed=None if seed is None else seed + i * n,
        )
        for i, prompt in enumerate(prompts)
    ]
