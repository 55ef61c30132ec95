"""Model registry: resolve names to loadable folders (building local ones once), tokenizers and prompters by name."""

from prm.models.cache import model_cache_dir
from prm.models.constants import ARITH_POLICY_NAME, JUDGE_CARD_FILE, JUDGE_NAME, SHIPPED_JUDGE_DIR, SMOLLM2_NAME
from prm.models.judge import adapter_digest, judge_card_problems, read_judge_card
from prm.models.registry import REGISTERED_MODELS, model_version, resolve_model, weights_digest
from prm.models.smollm2 import smollm2_gguf_path
from prm.models.tokenizers import load_tokenizer, prompter_for

__all__ = [
    "ARITH_POLICY_NAME",
    "JUDGE_CARD_FILE",
    "JUDGE_NAME",
    "REGISTERED_MODELS",
    "SHIPPED_JUDGE_DIR",
    "SMOLLM2_NAME",
    "adapter_digest",
    "judge_card_problems",
    "load_tokenizer",
    "model_cache_dir",
    "model_version",
    "prompter_for",
    "read_judge_card",
    "resolve_model",
    "smollm2_gguf_path",
    "weights_digest",
]
