"""Tiny randomly initialised PRMs, one per step-tag convention, with char-level tokenizers built here.

Each is the structural twin of the real model: a two-class token-classification head (Llama for ours,
Qwen2 for Qwen2.5-Math-PRM, whose real head loads through AutoModel + trust_remote_code) or a causal LM
read through the "+"/"-" logits (Math-Shepherd's Mistral). The weights are random with a large init
range, so scores spread over (0, 1) and a wrong position or a padding leak shows up in the numbers.
"""

from __future__ import annotations

import string
from pathlib import Path

import pytest

from prm.format import CONVENTIONS

PAD, BOS, EOS, UNK = "<pad>", "<s>", "</s>", "<unk>"
QWEN_SPECIALS = ["<|im_start|>", "<|im_end|>", "<extra_0>"]
# Qwen2.5's chat template reduced to what the PRM conversation uses (system, user, assistant turns).
QWEN_TEMPLATE = ("{% for m in messages %}{{ '<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>\\n' }}"
                 "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")
CONTEXT = 256  # small, so a context overflow is cheap to build


@pytest.fixture(autouse=True, scope="session")
def _one_thread():
    import torch

    torch.set_num_threads(1)  # the test machine is shared; tiny models gain nothing from more


def char_tokenizer(*, bos: bool, specials: list[str] = (), added: list[str] = (), chat_template: str | None = None):
    """One token per printable character; ``specials``/``added`` become single tokens (cut out before splitting)."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab = {tok: i for i, tok in enumerate([PAD, BOS, EOS, UNK])}
    for char in string.printable:
        vocab.setdefault(char, len(vocab))
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token=UNK))
    backend.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    backend.decoder = decoders.Fuse()
    if bos:
        backend.post_processor = processors.TemplateProcessing(single=f"{BOS} $A", special_tokens=[(BOS, vocab[BOS])])
    backend.add_special_tokens(list(specials))
    backend.add_tokens(list(added))
    tok = PreTrainedTokenizerFast(tokenizer_object=backend, bos_token=BOS if bos else None, eos_token=EOS,
                                  pad_token=PAD, unk_token=UNK, model_max_length=CONTEXT,
                                  clean_up_tokenization_spaces=False)
    if chat_template:
        tok.chat_template = chat_template
    return tok


def _config(cls, tok, **extra):
    sizes = {"hidden_size": 32, "intermediate_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2} | extra
    return cls(vocab_size=len(tok), num_hidden_layers=2, max_position_embeddings=CONTEXT, initializer_range=0.5,
               pad_token_id=tok.pad_token_id, **sizes)


def build_prm(kind: str, folder: Path, *, with_convention: bool = True, **sizes) -> Path:
    """Save a tiny PRM of ``kind`` (a CONVENTIONS name, or "causal-as-token-classification") into ``folder``;
    ``sizes`` override the model config's (vLLM's CPU attention needs a head size of 32 or more)."""
    import torch
    from transformers import (
        LlamaConfig,
        LlamaForCausalLM,
        LlamaForTokenClassification,
        Qwen2Config,
        Qwen2ForTokenClassification,
    )

    torch.manual_seed(0)
    if kind == "prm-pipeline":
        tok = char_tokenizer(bos=True)
        model = LlamaForTokenClassification(_config(LlamaConfig, tok, num_labels=2, **sizes))
    elif kind == "qwen2.5-math-prm":
        tok = char_tokenizer(bos=False, specials=QWEN_SPECIALS, chat_template=QWEN_TEMPLATE)
        model = Qwen2ForTokenClassification(_config(Qwen2Config, tok, num_labels=2, **sizes))
    elif kind == "math-shepherd":
        tok = char_tokenizer(bos=True, added=["ки"])
        model = LlamaForCausalLM(_config(LlamaConfig, tok, **sizes))
    elif kind == "causal-as-token-classification":
        tok = char_tokenizer(bos=True)
        model = LlamaForCausalLM(_config(LlamaConfig, tok, **sizes))
        kind = "prm-pipeline"
    else:
        raise ValueError(kind)
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    if with_convention:
        CONVENTIONS[kind].save(folder)
    return folder


@pytest.fixture(scope="session")
def prm_folders(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("prms")
    return {name: build_prm(name, root / name) for name in CONVENTIONS}
