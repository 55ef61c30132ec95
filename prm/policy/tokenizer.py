"""A character-level tokenizer built with ``tokenizers``, wrapped as ``PreTrainedTokenizerFast``.

One token per character keeps digits separate (no BPE merges that hide carries), needs no training data
and loads with ``AutoTokenizer.from_pretrained`` (so vLLM can serve the policy).
"""

from __future__ import annotations

from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors
from transformers import PreTrainedTokenizerFast

from prm.policy.constants import (
    BOS_TOKEN,
    CHARSET,
    EOS_TOKEN,
    MAX_POSITIONS,
    PAD_TOKEN,
    SPECIAL_TOKENS,
    UNK_TOKEN,
)


def build_char_tokenizer() -> PreTrainedTokenizerFast:
    """The policy tokenizer: specials first, then one id per character of ``CHARSET``; adds ``<s>``.

    >>> tok = build_char_tokenizer()
    >>> ids = tok("3-7 = -4\\n").input_ids
    >>> len(ids), tok.decode(ids, skip_special_tokens=True)
    (10, '3-7 = -4\\n')
    """
    vocab = {token: i for i, token in enumerate(SPECIAL_TOKENS)}
    for char in CHARSET:
        vocab[char] = len(vocab)
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token=UNK_TOKEN))
    # Every character is its own piece, newlines and spaces included ("[\s\S]" also matches "\n").
    backend.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    backend.decoder = decoders.Fuse()  # join pieces with no separator
    bos_id = vocab[BOS_TOKEN]
    backend.post_processor = processors.TemplateProcessing(
        single=f"{BOS_TOKEN} $A", pair=f"{BOS_TOKEN} $A $B", special_tokens=[(BOS_TOKEN, bos_id)]
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=backend,
        bos_token=BOS_TOKEN,
        eos_token=EOS_TOKEN,
        pad_token=PAD_TOKEN,
        unk_token=UNK_TOKEN,
        model_max_length=MAX_POSITIONS,
        clean_up_tokenization_spaces=False,
    )
