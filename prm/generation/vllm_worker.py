"""The process that owns the `vllm.LLM` engine; run as ``python -m prm.generation.vllm_worker FD``.

A fresh interpreter, not a fork or `multiprocessing` child, so it never re-imports the caller's
``__main__`` and works the same under pytest, Dagster's asset subprocesses, notebooks and scripts
without a ``__main__`` guard. It talks to :class:`prm.generation.vllm_backend.VLLMBackend` over an
inherited socket with pickled ``(kind, payload)`` messages, and exits when that socket closes, so an
orphaned engine never outlives its owner.
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Sequence
from multiprocessing.connection import Connection
from typing import Any

from prm.generation.backend import derive_seed, request_error, too_long_error
from prm.generation.config import GenerationConfig
from prm.generation.types import BackendInfo, Completion, GenerationRequest

_GIB = 1 << 30


class Engine:
    """`vllm.LLM` built from a :class:`GenerationConfig`, turning requests into Completion rows."""

    def __init__(self, config: GenerationConfig) -> None:
        import vllm

        self.config = config
        kwargs: dict[str, Any] = {
            "model": config.model,
            "dtype": config.dtype,
            "seed": config.seed,
            "enable_prefix_caching": config.enable_prefix_caching,
            "enforce_eager": config.enforce_eager,
            "gpu_memory_utilization": config.gpu_memory_utilization,
            "max_num_seqs": config.max_num_seqs,
            "enable_chunked_prefill": config.enable_chunked_prefill,
        }
        if config.max_model_len is not None:
            kwargs["max_model_len"] = config.max_model_len
            # Without chunked prefill one step must hold a whole prompt.
            kwargs["max_num_batched_tokens"] = max(config.max_model_len, 4096)
        if config.kv_cache_gib is not None:
            kwargs["kv_cache_memory_bytes"] = int(config.kv_cache_gib * _GIB)
        self.llm = vllm.LLM(**kwargs)
        self.tokenizer = self.llm.get_tokenizer()
        self.max_model_len = int(self.llm.llm_engine.model_config.max_model_len)
        self.info = BackendInfo(
            backend="vllm",
            model=config.model,
            max_model_len=self.max_model_len,
            extra={"vllm_version": vllm.__version__, "prefix_caching": str(config.enable_prefix_caching)},
        )

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Completion]:
        """Run every valid request in one batched engine call; invalid ones become error rows."""
        from vllm import SamplingParams

        rows: list[Completion | None] = [None] * len(requests)
        runnable: list[int] = []
        params = []
        for i, req in enumerate(requests):
            error = request_error(req)
            prompt_tokens = 0
            if error is None:
                prompt_tokens = len(self.tokenizer.encode(req.prompt))
                error = too_long_error(prompt_tokens, self.max_model_len)
            if error is not None:
                rows[i] = Completion.failed(i, error, prompt_tokens)
                continue
            runnable.append(i)
            params.append(
                SamplingParams(
                    n=req.n,
                    max_tokens=req.max_tokens,
                    temperature=req.temperature,
                    top_p=req.top_p,
                    stop=list(req.stop) or None,
                    seed=req.seed if req.seed is not None else derive_seed(self.config.seed, i),
                )
            )
        prompts = [requests[i].prompt for i in runnable]
        try:
            outputs = self.llm.generate(prompts, params, use_tqdm=False) if runnable else []
        except (ValueError, TypeError):
            # vLLM rejected one input for the whole batch: isolate it by running rows one at a time.
            outputs = []
            for i, prompt, param in zip(runnable, prompts, params, strict=True):
                try:
                    outputs.extend(self.llm.generate([prompt], [param], use_tqdm=False))
                except (ValueError, TypeError) as exc:
                    rows[i] = Completion.failed(i, f"vLLM rejected the request: {exc}")
                    outputs.append(None)
        for i, out in zip(runnable, outputs, strict=True):
            if out is not None:
                rows[i] = _to_completion(i, out)
        return [row for row in rows if row is not None]


def _to_completion(index: int, out: Any) -> Completion:
    """A vLLM ``RequestOutput`` as a Completion row, with token counts from the engine's own ids."""
    samples = sorted(out.outputs, key=lambda s: s.index)
    return Completion(
        texts=tuple(s.text for s in samples),
        finish_reasons=tuple(s.finish_reason or "length" for s in samples),
        prompt_tokens=len(out.prompt_token_ids or ()),
        completion_tokens=tuple(len(s.token_ids) for s in samples),
        index=index,
    )


def serve(conn: Connection) -> None:
    """Build the engine from the first message, then answer ``generate`` messages until shutdown/EOF."""
    config: GenerationConfig = conn.recv()
    try:
        engine = Engine(config)
    except BaseException:
        conn.send(("error", traceback.format_exc()))
        return
    conn.send(("ready", engine.info))
    while True:
        try:
            kind, payload = conn.recv()
        except (EOFError, OSError):
            return
        if kind == "shutdown":
            return
        try:
            conn.send(("ok", engine.generate(payload)))
        except Exception:
            conn.send(("error", traceback.format_exc()))
            if not _engine_alive(engine):
                return


def _engine_alive(engine: Engine) -> bool:
    """False once vLLM's engine core has died; the worker then exits instead of failing every call."""
    try:
        return not engine.llm.llm_engine.engine_core.resources.engine_dead
    except AttributeError:
        return True


def main(argv: list[str]) -> None:
    """Entry point: ``argv[0]`` is the inherited socket's file descriptor."""
    conn = Connection(int(argv[0]))
    try:
        serve(conn)
    finally:
        conn.close()


if __name__ == "__main__":
    main(sys.argv[1:])
