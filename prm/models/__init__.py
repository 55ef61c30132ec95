"""Model registry: resolve names to loadable folders (building local ones once) and format prompts."""

from prm.models.cache import model_cache_dir
from prm.models.prompts import format_prompt, load_tokenizer
from prm.models.registry import REGISTERED_MODELS, model_version, resolve_model

__all__ = ["REGISTERED_MODELS", "format_prompt", "load_tokenizer", "model_cache_dir", "model_version", "resolve_model"]
