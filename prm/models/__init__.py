"""Model registry: the shipped models by name (``prm/shipped/<name>``, :data:`SHIPPED_MODELS`), names resolved to
loadable folders (building local ones once), tokenizers and prompters by name, and a folder's version: the digest
of every file that changes its scores (:mod:`prm.models.versions`)."""

from prm.models.cache import model_cache_dir
from prm.models.constants import (
    ARITH_POLICY_NAME,
    ARITH_PRM_NAME,
    JUDGE_CARD_FILE,
    JUDGE_NAME,
    SHIPPED_JUDGE_DIR,
    SHIPPED_PRM_DIR,
    SMOLLM2_NAME,
)
from prm.models.judge import adapter_digest, judge_card_problems, read_judge_card
from prm.models.newest import FOLDER_NAME, POINTER, VERSIONS, newest_version, trained_root
from prm.models.registry import REGISTERED_MODELS, local_model, resolve_model
from prm.models.shipped import SHIPPED_MODELS, read_prm_card_entry
from prm.models.smollm2 import smollm2_gguf_path
from prm.models.tokenizers import load_tokenizer, prompter_for
from prm.models.versions import (
    check_score_files,
    model_version,
    reference_name,
    score_digests,
    verify_shipped_prm,
    weights_digest,
)

__all__ = [
    "ARITH_POLICY_NAME",
    "ARITH_PRM_NAME",
    "FOLDER_NAME",
    "JUDGE_CARD_FILE",
    "JUDGE_NAME",
    "POINTER",
    "REGISTERED_MODELS",
    "SHIPPED_JUDGE_DIR",
    "SHIPPED_MODELS",
    "SHIPPED_PRM_DIR",
    "SMOLLM2_NAME",
    "VERSIONS",
    "adapter_digest",
    "check_score_files",
    "judge_card_problems",
    "load_tokenizer",
    "local_model",
    "model_cache_dir",
    "model_version",
    "newest_version",
    "prompter_for",
    "read_judge_card",
    "read_prm_card_entry",
    "reference_name",
    "resolve_model",
    "score_digests",
    "smollm2_gguf_path",
    "trained_root",
    "verify_shipped_prm",
    "weights_digest",
]
