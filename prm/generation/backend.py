"""The one interface every generation backend implements, plus the input checks they share."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from prm.generation.types import BackendInfo, Completion, GenerationRequest
from prm.settings import check_seed


@runtime_checkable
class GenerationBackend(Protocol):
    """Samples completions. Bad rows come back as ``status="error"``; only a dead backend raises."""

    @property
    def info(self) -> BackendInfo:
        """What is being served (model, context length)."""
        ...

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Completion]:
        """One :class:`Completion` per request, in request order (``Completion.index`` = position)."""
        ...

    def close(self) -> None:
        """Release the engine, worker process or HTTP client; idempotent."""
        ...

    def __enter__(self) -> GenerationBackend: ...

    def __exit__(self, *exc: object) -> None: ...


def request_error(request: GenerationRequest) -> str | None:
    """Why ``request`` cannot run (before tokenization), or None if it can.

    >>> request_error(GenerationRequest(prompt=""))
    'empty prompt: nothing to condition on; pass the formatted question or step prefix'
    >>> request_error(GenerationRequest(prompt="1+1=")) is None
    True
    """
    if not isinstance(request.prompt, str) or not request.prompt:
        return "empty prompt: nothing to condition on; pass the formatted question or step prefix"
    if request.n < 1:
        return f"n={request.n}: ask for at least one completion"
    if request.max_tokens < 1:
        return f"max_tokens={request.max_tokens}: allow at least one generated token"
    if request.temperature < 0:
        return f"temperature={request.temperature}: must be >= 0 (0 = greedy)"
    if not 0 < request.top_p <= 1:
        return f"top_p={request.top_p}: must be in (0, 1]"
    if request.seed is not None:
        try:
            check_seed("seed", request.seed)
        except ValueError as err:
            return str(err)
    return None


def too_long_error(prompt_tokens: int, max_model_len: int) -> str | None:
    """Error text when a prompt leaves no room to generate within the context, else None."""
    if prompt_tokens >= max_model_len:
        return (
            f"prompt is {prompt_tokens} tokens but the context holds {max_model_len}: "
            "shorten the prompt or raise GenerationConfig.max_model_len"
        )
    return None


def derive_seed(base_seed: int, index: int) -> int:
    """A per-request seed from the config seed and the request position, spread out so that vLLM's
    ``seed + sample_index`` for ``n > 1`` never makes two requests share a seed.

    >>> derive_seed(0, 1) == derive_seed(0, 1) != derive_seed(0, 2)
    True
    """
    return random.Random(f"{base_seed}:{index}").getrandbits(31)
