"""Shared fixtures for generation and model tests: a tiny local policy, engines started once, and the tiny
random causal LM (the policy's char tokenizer) that PRM, reward and RL tests build their models from."""

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


def save_tiny_lm(folder: Path, context: int) -> Path:
    """Save a randomly initialised ~5k-parameter Llama (seed 0) and the policy's char tokenizer to ``folder``.

    ``context`` is its max_position_embeddings: tests pick it so a long enough input overflows it.
    """
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from prm.policy import build_char_tokenizer

    tokenizer = build_char_tokenizer()
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=context,
                         tie_word_embeddings=True, bos_token_id=tokenizer.bos_token_id,
                         eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id)
    torch.manual_seed(0)
    LlamaForCausalLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def train_tiny_prm(base: Path, out: Path) -> Path:
    """A PRM folder (token-classification head + prm_convention.json) trained for two steps from ``base``."""
    from prm.training import PRMTrainConfig, train_prm

    rows = [{"prompt": f"{i} plus 1", "completions": ["ok", "no"][: 1 + i % 2], "labels": [True, False][: 1 + i % 2]}
            for i in range(8)]
    config = PRMTrainConfig(base_model=str(base), max_steps=2, batch_size=8, warmup_steps=0, logging_steps=1,
                            eval_steps=10, save_steps=10)
    return train_prm(rows, out, config)
