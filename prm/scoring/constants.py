"""Fixed numbers and texts of PRM scoring, each with its reason."""

from __future__ import annotations

# Qwen2.5-Math-PRM's system turn, verbatim from its model card's example (huggingface.co/Qwen/Qwen2.5-Math-PRM-7B):
# the PRM was trained on conversations that open with it.
QWEN_PRM_SYSTEM_PROMPT = "Please reason step by step, and put your final answer within \\boxed{}."

# Items per forward pass: 8 solutions of a few hundred tokens fit a 7B PRM in bf16 on one 80 GB GPU with room
# to spare, and on CPU larger batches gain little once the matrix multiplies are big enough.
DEFAULT_BATCH_SIZE = 8

# transformers sets tokenizer.model_max_length to ~1e30 when a tokenizer declares no limit; anything above
# this is "no limit" and the model config's max_position_embeddings decides.
NO_TOKENIZER_LIMIT = 10**8
