"""Shared fixtures for generation and model tests: engines started once on the tiny local policy. The tiny
models that PRM, reward and RL tests use come from tests/tiny_models.py (fixture ``tiny_models``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def vllm_backend(tiny_policy_dir: Path, tiny_context: int) -> Iterator[object]:
    """One real vLLM engine (worker process) for the whole session, on the tiny policy."""
    from prm.generation import GenerationConfig, make_backend

    config = GenerationConfig(model=str(tiny_policy_dir), max_model_len=tiny_context, kv_cache_gib=0.5, seed=7)
    backend = make_backend(config)
    yield backend
    backend.close()


@pytest.fixture(scope="session")
def tiny_openai_server(tiny_policy_dir: Path, tiny_context: int) -> Iterator[object]:
    """One real vLLM OpenAI-compatible server (``prm.generation.start_openai_server``) on the tiny policy, with
    ``vllm_backend``'s engine settings, for the whole session: the HTTP-backend tests and the fleet's surviving
    server share it (a test that kills a server starts its own)."""
    from prm.generation import GenerationConfig, start_openai_server

    config = GenerationConfig(model=str(tiny_policy_dir), max_model_len=tiny_context, kv_cache_gib=0.5, seed=7)
    with start_openai_server(config, timeout_s=300) as server:
        yield server
