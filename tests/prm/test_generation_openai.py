"""OpenAIHTTPBackend: per-row failure on a closed port, and the real vLLM server on a tiny policy."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from prm.generation import GenerationConfig, GenerationRequest, make_backend, sample_solutions, start_openai_server
from prm.generation.server import free_port


def test_closed_port_gives_clear_per_row_failures() -> None:
    config = GenerationConfig(
        backend="openai", base_url=f"http://127.0.0.1:{free_port()}/v1", max_retries=1, backoff_s=0.01
    )
    started = time.monotonic()
    with make_backend(config) as backend:
        rows = backend.generate([GenerationRequest("1+1="), GenerationRequest("2+2=", n=2)])
    assert time.monotonic() - started < 10
    assert [r.status for r in rows] == ["error", "error"]
    assert all("cannot reach the completions server" in r.error and "api_server" in r.error for r in rows)


@pytest.fixture(scope="module")
def served(tiny_policy_dir: Path, tiny_context: int) -> Iterator[GenerationConfig]:
    config = GenerationConfig(model=str(tiny_policy_dir), max_model_len=tiny_context, kv_cache_gib=0.5, seed=7)
    with start_openai_server(config, timeout_s=180) as server:
        yield GenerationConfig(backend="openai", base_url=server.base_url, max_concurrency=4)


@pytest.mark.slow
def test_http_backend_returns_the_same_kind_of_rows(served: GenerationConfig, vllm_backend, tiny_context: int) -> None:
    requests = [
        GenerationRequest("12+7-3*2 =", n=3, max_tokens=12, seed=11),
        GenerationRequest(""),
        GenerationRequest("9" * (tiny_context + 10), max_tokens=4),
    ]
    with make_backend(served) as backend:
        assert backend.info.max_model_len == tiny_context
        rows = backend.generate(requests)
        again = backend.generate(requests[:1])
    offline = vllm_backend.generate(requests)
    assert [r.status for r in rows] == [r.status for r in offline] == ["ok", "error", "error"]
    assert rows[0].prompt_tokens == offline[0].prompt_tokens
    assert len(rows[0].texts) == 3 and all(1 <= c <= 12 for c in rows[0].completion_tokens)
    assert again[0].texts == rows[0].texts  # per-request seed is honoured by the server
    assert "empty prompt" in rows[1].error
    assert "server rejected the request (400)" in rows[2].error


@pytest.mark.slow
def test_sample_solutions_over_http(served: GenerationConfig) -> None:
    with make_backend(served) as backend:
        rows = sample_solutions(backend, ["3-7 =", "4*5 ="], n=2, max_tokens=6, seed=0)
    assert all(r.ok and r.total_completion_tokens >= 2 for r in rows)
