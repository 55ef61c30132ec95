"""Generation: one backend interface over an offline vLLM engine or an OpenAI-compatible server."""

from prm.generation.backend import GenerationBackend
from prm.generation.config import GenerationConfig
from prm.generation.factory import make_backend
from prm.generation.sampling import rollouts_from_prefixes, sample_solutions
from prm.generation.server import OpenAIServer, start_openai_server
from prm.generation.types import BackendInfo, Completion, GenerationRequest

__all__ = [
    "BackendInfo",
    "Completion",
    "GenerationBackend",
    "GenerationConfig",
    "GenerationRequest",
    "OpenAIServer",
    "make_backend",
    "rollouts_from_prefixes",
    "sample_solutions",
    "start_openai_server",
]
