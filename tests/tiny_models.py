"""Every tiny model the tests build, in one place; ``tests/conftest.py`` serves them as session fixtures.

Two kinds over the policy's character tokenizer, built in the test (no policy build, no download):

* a tiny causal LM: a randomly initialised ~5k-parameter Llama (seed 0), :func:`save_tiny_lm`;
* a tiny PRM: a token-classification head trained for two steps from a tiny LM, :func:`train_tiny_prm`.

Their one shape parameter is the context (``max_position_embeddings``): each test directory picks it so that
a long enough input overflows it, and asks :class:`TinyModels` (the ``tiny_models`` fixture) for the model of
that context; each context is built once per session and shared by every directory that asks for it.

And one kind per step-tag convention, with char-level tokenizers built here: :func:`build_prm` saves a tiny
randomly initialised PRM shaped like the real model of each convention (tests/prm/scoring). The Qwen2.5-Math-PRM
twin with its own head code lives in tests/prm/scoring/qwen_prm.py and uses :func:`char_tokenizer`.
"""

from __future__ import annotations

import string
import threading
from pathlib import Path

# --- tiny causal LM and tiny trained PRM over the policy's char tokenizer -------------------------------------


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
    config = PRMTrainConfig(base_model=str(base), head="classifier", max_steps=2, batch_size=8, warmup_steps=0,
                            logging_steps=1, eval_steps=10, save_steps=10)
    return train_prm(rows, out, config)


class TinyModels:
    """The session's tiny LMs and PRMs by context, each built on first use under ``root`` and then reused."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._built: dict[tuple[str, int], Path] = {}
        self._lock = threading.Lock()  # a fixture may be asked from a test's thread; build each model once

    def lm(self, context: int) -> Path:
        """A tiny causal LM folder (model + char tokenizer) with ``context`` positions."""
        return self._get("lm", context, lambda: save_tiny_lm(self.root / f"lm-{context}", context))

    def prm(self, context: int) -> Path:
        """A tiny PRM folder trained for two steps from :meth:`lm` of the same ``context``; scores mean nothing."""
        return self._get("prm", context, lambda: train_tiny_prm(self.lm(context), self.root / f"prm-{context}"))

    def _get(self, kind: str, context: int, build) -> Path:
        key = (kind, context)
        with self._lock:
            found = self._built.get(key)
        if found is None:
            found = build()
            with self._lock:
                found = self._built.setdefault(key, found)
        return found


# --- tiny random PRMs, one per step-tag convention, with char-level tokenizers ---------------------------------
#
# Each is the structural twin of the real model: a two-class token-classification head (Llama for ours, Qwen2
# for Qwen2.5-Math-PRM, whose real head loads through AutoModel + trust_remote_code) or a causal LM read through
# the "+"/"-" logits (Math-Shepherd's Mistral). The weights are random with a large init range, so scores spread
# over (0, 1) and a wrong position or a padding leak shows up in the numbers.

PAD, BOS, EOS, UNK = "<pad>", "<s>", "</s>", "<unk>"
QWEN_SPECIALS = ["<|im_start|>", "<|im_end|>", "<extra_0>"]
# Qwen2.5's chat template reduced to what the PRM conversation uses (system, user, assistant turns).
QWEN_TEMPLATE = ("{% for m in messages %}{{ '<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>\\n' }}"
                 "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}")
CONTEXT = 256  # positions of the convention PRMs: small, so a context overflow is cheap to build


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

    from prm.format import CONVENTIONS

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
