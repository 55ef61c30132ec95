"""Generation: one backend interface over an offline vLLM engine or an OpenAI-compatible server."""

from prm.generation.backend import GenerationBackend, derive_seed
from prm.generation.config import GenerationConfig
from prm.generation.constants import ENGINE_CALL_TIMEOUT_S, ENGINE_STARTUP_TIMEOUT_S, SOLUTION_MAX_TOKENS
from prm.generation.engine_device import cpu_has_native_bf16, device_engine_kwargs
from prm.generation.factory import make_backend
from prm.generation.sampling import rollouts_from_prefixes, sample_solutions
from prm.generation.server import OpenAIServer, start_openai_server
from prm.generation.types import BackendInfo, Completion, GenerationRequest
from prm.generation.worker_process import WorkerDiedError, WorkerProcess, vllm_engine_alive, worker_main

__all__ = [
    "ENGINE_CALL_TIMEOUT_S",
    "ENGINE_STARTUP_TIMEOUT_S",
    "SOLUTION_MAX_TOKENS",
    "BackendInfo",
    "Completion",
    "GenerationBackend",
    "GenerationConfig",
    "GenerationRequest",
    "OpenAIServer",
    "WorkerDiedError",
    "WorkerProcess",
    "cpu_has_native_bf16",
    "derive_seed",
    "device_engine_kwargs",
    "make_backend",
    "rollouts_from_prefixes",
    "sample_solutions",
    "start_openai_server",
    "vllm_engine_alive",
    "worker_main",
]
