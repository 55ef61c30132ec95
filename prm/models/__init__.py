"""Model registry: resolve names to loadable folders (building local ones once), tokenizers and prompters by name."""

from prm.models.cache import model_cache_dir
from prm.models.registry import REGISTERED_MODELS, model_version, resolve_model, weights_digest
from prm.models.tokenizers import load_tokenizer, prompter_for

__all__ = [
    "REGISTERED_MODELS",
    "load_tokenizer",
    "model_cache_dir",
    "model_version",
    "prompter_for",
    "resolve_model",
    "weights_digest",
]
