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

