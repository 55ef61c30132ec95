"""``prm-reward``: serve a PRM folder as an RL reward over HTTP (see :mod:`prm.reward_server.app`)."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import click

from prm.models import local_model
from prm.reward_server.constants import (
    DEFAULT_MAX_CHARS_PER_TOKEN,
    DEFAULT_MAX_SAMPLES,
    DEFAULT_MAX_STEPS,
    DEFAULT_PACE,
)
from prm.reward_server.http_limits import HttpLimits
from prm.rewards import DEFAULT_ETA, DEFAULT_OUTCOME_WEIGHT, DEFAULT_TEMPERATURE, SHAPING_NAMES, RewardConfig
from prm.scoring import ENGINES

DEVICES = ("auto", "cpu", "cuda")
DTYPES = ("auto", "float32", "bfloat16", "float16")  # prm.scoring.scorer.DTYPES, without importing torch for --help
# Forward pass size on CPU. A CPU pass costs about the same per completion at any batch size (the matmuls of
# even the 0.8M-parameter arith-policy over ~100 tokens are compute-bound at batch 1) and more beyond ~8 as
# activations leave the cache: on this 2-core box, one thread, about 8 / 7 / 7 / 7-10 / 16-18 ms per completion
# at batch 1 / 2 / 4 / 8 / 64 (arith-policy PRM, ~100 tokens each). On CUDA one pass takes the whole batch.
CPU_FORWARD_BATCH = 4


def _fail(what: str, todo: str) -> None:
    click.echo(f"Error: {what} - {todo}", err=True)
    sys.exit(1)


@click.group()
def main() -> None:
    """Serve process-reward-model rewards to RL frameworks (OpenRLHF, verl, dense-reward managers).

    Example: prm-reward serve --prm arith-prm --shaping min --port 8000
    """


def server_dtype(dtype: str, device: str) -> str:
    """The server's dtype: ``auto`` is the scorer's on CUDA (bf16, fp16 on GPUs without bf16), and bf16 on CPUs
    with native bf16, where it serves concurrent load faster (measured on AVX512-BF16: 3.6x one-at-a-time
    throughput vs 2.5x in fp32; a lone request is ~10% slower), else fp32. The library's ScorerConfig keeps fp32
    on CPU, where scores must match to 1e-6.

    >>> server_dtype("float32", "cpu")
    'float32'
    """
    if dtype != "auto":
        return dtype
    if device.startswith("cuda"):
        from prm.scoring import cuda_bf16, resolve_dtype

        return resolve_dtype("auto", device, cuda_bf16(device))
    from prm.generation import cpu_has_native_bf16

    return "bfloat16" if cpu_has_native_bf16() else "float32"


@main.command()
@click.option("--prm", "--model", "model_dir", required=True,
              help="PRM folder (e.g. one prm.training.train_prm wrote) or a shipped PRM's name, e.g. arith-prm (an "
                   "LM-head PRM needs --engine transformers).")
@click.option("--shaping", type=click.Choice(SHAPING_NAMES), default="min", show_default=True,
              help="How step scores become one reward (min is PURE's min-form; sum is the naive, hackable form).")
@click.option("--outcome-weight", type=float, default=DEFAULT_OUTCOME_WEIGHT, show_default=True,
              help="w in (1 - w) * process + w * outcome; > 0 needs gold answers in every request, 0 is PRM-only.")
@click.option("--temperature", type=float, default=DEFAULT_TEMPERATURE, show_default=True, help="soft_min's T.")
@click.option("--eta", type=float, default=DEFAULT_ETA, show_default=True, help="clip / clip_delta threshold.")
@click.option("--prof-filter/--no-prof-filter", default=False, show_default=True,
              help="Zero the reward of samples whose outcome and PRM steps disagree (PROF-style).")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (0.0.0.0: all).")
@click.option("--port", type=int, default=8000, show_default=True)
@click.option("--max-batch", type=int, default=64, show_default=True, help="Completions per forward pass.")
@click.option("--forward-batch", type=int, default=None,
              help="Completions per forward pass within a batch (default: --max-batch on CUDA, "
                   f"{CPU_FORWARD_BATCH} on CPU).")
@click.option("--max-wait-ms", type=float, default=10.0, show_default=True,
              help="How long the first queued completion waits for others to share its forward pass.")
@click.option("--max-body-bytes", type=int, default=HttpLimits.max_body_bytes, show_default=True,
              help="Larger bodies get a 413.")
@click.option("--max-inflight-body-bytes", type=int, default=HttpLimits.max_inflight_body_bytes, show_default=True,
              help="Bytes of request bodies read or served at once; the next body waits unread (bounds memory).")
@click.option("--max-header-bytes", type=int, default=HttpLimits.max_header_bytes, show_default=True,
              help="A larger request line + headers gets a 431 and the connection closed.")
@click.option("--read-timeout", type=float, default=HttpLimits.read_timeout_s, show_default=True,
              help="Seconds a client has to send a whole request; then a 408 and the connection closed.")
@click.option("--header-timeout", type=float, default=HttpLimits.header_timeout_s, show_default=True,
              help="Seconds a new connection has to send its request's head; then a 408 and the connection closed.")
@click.option("--max-connections", type=int, default=HttpLimits.max_connections, show_default=True,
              help="Open connections (lowered to fit ulimit -n); at the cap a newcomer takes the place of a "
                   "connection that has not sent its head, the longest waiting, whatever its address.")
@click.option("--max-samples", type=int, default=DEFAULT_MAX_SAMPLES, show_default=True,
              help="Queries per /get_reward request (OpenRLHF <= v0.9.0 posts its whole rollout batch).")
@click.option("--max-steps", type=int, default=DEFAULT_MAX_STEPS, show_default=True,
              help="Completions with more steps get the no-step reward without being scored.")
@click.option("--max-chars-per-token", type=int, default=DEFAULT_MAX_CHARS_PER_TOKEN, show_default=True,
              help="Prompt + steps longer than this many characters per token of PRM context count as past the "
                   "context without being tokenized.")
@click.option("--pace", type=float, default=DEFAULT_PACE, show_default=True,
              help="A sample is answered no sooner than this many times the CPU it cost (0: off), so a client "
                   "padding its requests waits for its padding.")
@click.option("--engine", type=click.Choice(ENGINES), default="transformers", show_default=True,
              help="transformers: the PRM in this process; vllm: vLLM's pooling runner in a worker process "
                   "(same scores to 1e-3; --forward-batch then defaults to --max-batch).")
@click.option("--device", type=click.Choice(DEVICES), default="auto", show_default=True,
              help="auto: cuda when available, else cpu.")
@click.option("--dtype", type=click.Choice(DTYPES), default="auto", show_default=True,
              help="auto: bfloat16 on CUDA and on CPUs that compute it natively (AVX512-BF16/AMX), else float32.")
@click.option("--threads", type=int, default=None, help="torch CPU threads (default: torch's own choice).")
@click.option("--trust-remote-code", is_flag=True,
              help="Load a PRM whose head is code in its folder (Qwen2.5-Math-PRM); read that code first.")
@click.option("--chat-template", default=None,
              help="A tokenizer (registered name or folder) whose chat template the trainer renders prompts with; "
                   "tried before the PRM's own and the common families when a prompt is read back to its question.")
@click.option("--log-level", type=click.Choice(["debug", "info", "warning", "error"]), default="info",
              show_default=True)
def serve(model_dir: str, shaping: str, outcome_weight: float, temperature: float, eta: float, prof_filter: bool,
          host: str, port: int, max_batch: int, forward_batch: int | None, max_wait_ms: float, max_body_bytes: int,
          max_inflight_body_bytes: int, max_header_bytes: int, read_timeout: float, header_timeout: float,
          max_connections: int, max_samples: int, max_steps: int, max_chars_per_token: int, pace: float, engine: str,
          device: str, dtype: str, threads: int | None, trust_remote_code: bool, chat_template: str | None,
          log_level: str) -> None:
    """Serve the PRM in --prm (alias --model) over HTTP until interrupted.

    Endpoints: POST /get_reward (OpenRLHF --remote_rm_url), POST /score (verl compute_score),
    POST /steps (per-step scores with character spans), GET /health, GET /ready (200 once the model loaded).

    Example: prm-reward serve --prm arith-prm --shaping min --outcome-weight 0 --port 8000
    """
    try:
        folder = prm_folder(model_dir)
    except (OSError, ValueError) as err:
        _fail(str(err), "pass --model DIR (alias --prm): a folder prm.training.train_prm wrote, a downloaded PRM "
              "or a shipped PRM's name (arith-prm)")
    if engine == "vllm":
        from prm.scoring import vllm_installed

        if not vllm_installed():
            _fail(f"--engine vllm needs the vllm package, which {sys.executable} lacks",
                  "install it (make venv; ACCEL=cuda on a GPU box) or serve with --engine transformers")
    try:
        from prm.reward_server.app import ServerConfig
        from prm.reward_server.batching import BatchingConfig

        reward = RewardConfig(shaping=shaping, outcome_weight=outcome_weight, temperature=temperature, eta=eta,
                              prof_filter=prof_filter)
        http = HttpLimits(max_body_bytes=max_body_bytes, max_inflight_body_bytes=max_inflight_body_bytes,
                          max_header_bytes=max_header_bytes, read_timeout_s=read_timeout,
                          header_timeout_s=header_timeout, max_connections=max_connections)
        config = ServerConfig(reward=reward, batching=BatchingConfig(max_batch=max_batch, max_wait_ms=max_wait_ms),
                              http=http, max_samples=max_samples, max_steps=max_steps,
                              max_chars_per_token=max_chars_per_token, pace=pace, chat_template=chat_template)
        from prm.scoring import ScorerConfig

        resolved = _device(device)
        if forward_batch is None:  # vLLM schedules a whole gathered batch itself
            whole = resolved.startswith("cuda") or engine == "vllm"
            forward_batch = max_batch if whole else min(max_batch, CPU_FORWARD_BATCH)
        scorer_config = ScorerConfig(engine=engine, batch_size=forward_batch, device=resolved,
                                     dtype=server_dtype(dtype, resolved), torch_threads=threads,
                                     trust_remote_code=trust_remote_code)
    except ValueError as err:
        _fail(str(err), "fix the option it names (see prm-reward serve --help)")
    logging.basicConfig(level=log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    run_server(folder, config, scorer_config, host=host, port=port, log_level=log_level)


def prm_folder(name: str | Path) -> Path:
    """The PRM folder ``--prm`` names (:func:`prm.models.local_model`: a folder, a registered name such as
    ``arith-prm``, or a hub id); a FileNotFoundError saying which otherwise.

    >>> prm_folder("/nowhere")
    Traceback (most recent call last):
    ...
    FileNotFoundError: no PRM folder at /nowhere (no config.json)
    """
    path = local_model(name)
    if not (path / "config.json").is_file():
        raise FileNotFoundError(f"no PRM folder at {name} (no config.json)")
    return path


def _device(choice: str) -> str:
    if choice != "auto":
        return choice
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def run_server(model_dir: Path, config, scorer_config, *, host: str, port: int, log_level: str = "info") -> None:
    """Build the app over ``model_dir`` and serve it with uvicorn in this thread (the model loads meanwhile)."""
    import uvicorn

    from prm.reward_server.app import RewardEngine, create_app
    from prm.reward_server.http_limits import uvicorn_config
    from prm.scoring import load_prm

    engine = RewardEngine(lambda: load_prm(model_dir, scorer_config), config)
    app = create_app(engine, model_name=str(model_dir))
    click.echo(f"prm-reward: serving {model_dir} on http://{host}:{port} (GET /ready answers 200 once loaded)",
               err=True)
    uvicorn.Server(uvicorn_config(app, config.http, host=host, port=port, log_level=log_level,
                                  timeout_graceful_shutdown=10)).run()


if __name__ == "__main__":
    main()
