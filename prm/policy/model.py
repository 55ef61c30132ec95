"""The policy network: a tiny Llama-architecture causal LM over the character vocabulary."""

from __future__ import annotations

from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerBase

from prm.policy.config import PolicyTrainConfig
from prm.policy.constants import MAX_POSITIONS


def build_model(config: PolicyTrainConfig, tokenizer: PreTrainedTokenizerBase) -> LlamaForCausalLM:
    """A freshly initialised ``LlamaForCausalLM`` sized by ``config`` (weights seeded by the caller).

    >>> from prm.policy.tokenizer import build_char_tokenizer
    >>> model = build_model(PolicyTrainConfig(), build_char_tokenizer())
    >>> 0.5e6 < model.num_parameters() < 1.5e6
    True
    """
    llama = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=config.hidden_size,
        intermediate_size=config.intermediate_size,
        num_hidden_layers=config.num_layers,
        num_attention_heads=config.num_heads,
        num_key_value_heads=config.num_heads,
        max_position_embeddings=MAX_POSITIONS,
        tie_word_embeddings=True,  # the embedding is a large share of a 1M model; tying halves it
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    return LlamaForCausalLM(llama)
