"""ScorerConfig: how a PRM is loaded and run, by either engine (no torch or vLLM import here)."""

from __future__ import annotations

from dataclasses import dataclass

from prm.generation import ENGINE_STARTUP_TIMEOUT_S

DTYPES = ("auto", "float32", "bfloat16", "float16")
# "transformers": the model in this process (HF AutoModel*); "vllm": vLLM's pooling runner in a worker process.
ENGINES = ("transformers", "vllm")


@dataclass(frozen=True)
class ScorerConfig:
    """How a PRM is loaded and run.

    >>> ScorerConfig(batch_size=0)
    Traceback (most recent call last):
    ...
    ValueError: batch_size=0 must be >= 1 (1 scores one solution per forward pass)
    >>> ScorerConfig(engine="tgi")
    Traceback (most recent call last):
    ...
    ValueError: engine='tgi' must be one of ('transformers', 'vllm')
    """

    engine: str = "transformers"  # see ENGINES; load_prm(..., engine="vllm") overrides it
    # transformers: solutions per forward pass (None: DEFAULT_BATCH_SIZE, see constants.py); vllm: solutions per
    # engine call (None: all of them, since vLLM schedules its own batches).
    batch_size: int | None = None
    device: str | None = None  # None: "cuda" when available, else "cpu"
    dtype: str = "auto"  # auto: bfloat16 on CUDA (the public PRMs ship bf16), float32 on CPU (exact; CPU bf16 is slow)
    torch_threads: int | None = None  # torch.set_num_threads when set (process-wide); None keeps torch's default
    max_length: int | None = None  # None: the model's max_position_embeddings, capped by the tokenizer's limit
    trust_remote_code: bool = False  # Qwen2.5-Math-PRM ships its head as code in the folder: opt in after reading it
    # --- engine="vllm" only; None follows the device (prm.generation.engine_device.device_engine_kwargs) ---
    gpu_memory_utilization: float | None = None  # share of device memory vLLM may take (0.9 on CUDA)
    kv_cache_gib: float | None = None  # KV cache (2 GiB of host RAM on CPU; on CUDA what the share leaves)
    startup_timeout_s: float = ENGINE_STARTUP_TIMEOUT_S  # engine load budget before a clear error

    def __post_init__(self) -> None:
        if self.engine not in ENGINES:
            raise ValueError(f"engine={self.engine!r} must be one of {ENGINES}")
        if self.batch_size is not None and self.batch_size < 1:
            raise ValueError(f"batch_size={self.batch_size} must be >= 1 (1 scores one solution per forward pass)")
        if self.dtype not in DTYPES:
            raise ValueError(f"dtype={self.dtype!r} must be one of {DTYPES}")
        if self.torch_threads is not None and self.torch_threads < 1:
            raise ValueError(f"torch_threads={self.torch_threads} must be >= 1, or None for torch's default")
        if self.max_length is not None and self.max_length < 2:
            raise ValueError(f"max_length={self.max_length} leaves no room for a step and its tag")
        if self.gpu_memory_utilization is not None and not 0.0 < self.gpu_memory_utilization <= 1.0:
            raise ValueError(f"gpu_memory_utilization={self.gpu_memory_utilization} must be in (0, 1]")
        if self.kv_cache_gib is not None and self.kv_cache_gib <= 0:
            raise ValueError(f"kv_cache_gib={self.kv_cache_gib} must be > 0, or None to follow the device")
        if self.startup_timeout_s <= 0:
            raise ValueError(f"startup_timeout_s={self.startup_timeout_s} must be > 0 seconds")


def resolve_dtype(name: str, device: str, cuda_bf16: bool = True) -> str:
    """The dtype both engines run: ``auto`` is bf16 on CUDA (fp16 on GPUs without bf16, ``cuda_bf16=False``,
    such as the T4), fp32 elsewhere.

    >>> resolve_dtype("auto", "cuda:0"), resolve_dtype("auto", "cuda", cuda_bf16=False), resolve_dtype("auto", "cpu")
    ('bfloat16', 'float16', 'float32')
    >>> resolve_dtype("float16", "cpu")
    'float16'
    """
    if name == "auto":
        if device.startswith("cuda"):
            return "bfloat16" if cuda_bf16 else "float16"
        return "float32"
    return name


def cuda_bf16(device: str) -> bool:
    """Whether ``device`` is a GPU that computes bf16 (False on CPU)."""
    if not device.startswith("cuda"):
        return False
    import torch

    return bool(torch.cuda.is_bf16_supported())
