"""make_backend: the only place that knows which backend runs."""

from __future__ import annotations

from prm.generation.backend import GenerationBackend
from prm.generation.config import GenerationConfig
from verifiers import refuse_reimported_main


def make_backend(config: GenerationConfig) -> GenerationBackend:
    """The backend ``config.backend`` names; close it (or use ``with``) when done.

    ``"vllm"`` starts the engine worker now (35-60 s on CPU); ``"openai"`` only opens an HTTP client. Refused in a
    multiprocessing child that is re-importing an unguarded main script (it would start a second engine).
    """
    refuse_reimported_main(f"a {config.backend} generation backend")
    if config.backend == "vllm":
        from prm.generation.vllm_backend import VLLMBackend

        return VLLMBackend(config)
    if config.backend == "openai":
        from prm.generation.openai_backend import OpenAIHTTPBackend

        return OpenAIHTTPBackend(config)
    raise ValueError(f"backend={config.backend!r} is unknown; use 'vllm' or 'openai'")
