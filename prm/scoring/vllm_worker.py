"""The process that owns a vLLM pooling engine for PRM scoring; run as ``python -m prm.scoring.vllm_worker FD``.

Started by :class:`prm.scoring.vllm_scorer.VLLMScorer` through :class:`prm.generation.worker_process.WorkerProcess`
(a fresh interpreter: vLLM's engine core spawns processes, which needs no ``__main__`` guard this way). The
first message is the engine spec; each ``("score", [(input_ids, tag_positions), ...])`` message is answered
with P(good) at every tag, read from ``LLM.encode(..., pooling_task="token_classify")``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from prm.generation import vllm_engine_alive, worker_main
from prm.scoring.vllm_layout import POOLER, POOLING_TASK

# Labels per token of a PRM head: 0 = bad, 1 = good (prm.scoring.folder_config.PRM_CLASSES).
PRM_LABELS = 2


class ScoringEngine:
    """``vllm.LLM`` in the pooling runner, checked on a probe input before it answers ``ready``: a model vLLM
    loads but cannot run (a head size its CPU attention lacks) fails at load, not at the first score."""

    def __init__(self, spec: dict[str, Any]) -> None:
        import vllm
        from vllm.config import PoolerConfig
        from vllm.platforms import current_platform

        device = str(current_platform.device_type)
        if current_platform.is_cpu() != spec["on_cpu"]:
            wanted = "cpu" if spec["on_cpu"] else "cuda"
            raise RuntimeError(f"the installed vLLM runs on {device} but the scorer asked for {wanted}; set "
                               f"ScorerConfig(device={device!r}), or install the vLLM build for {wanted}")
        self.llm = vllm.LLM(**spec["engine"], pooler_config=PoolerConfig(**POOLER))
        self.score([spec["probe"]])
        model_config = self.llm.llm_engine.model_config
        self.info = {"vllm_version": vllm.__version__, "device": device,
                     "dtype": str(model_config.dtype).removeprefix("torch."),
                     "max_model_len": int(model_config.max_model_len)}

    def handle(self, kind: str, payload: Any) -> Any:
        """The worker protocol: ``("score", items)`` is the only message."""
        if kind != "score":
            raise ValueError(f"unknown message {kind!r}; the scoring worker answers 'score'")
        return self.score(payload)

    def score(self, items: Sequence[tuple[list[int], list[int]]]) -> list[list[float]]:
        """P(good) at the tag positions of each ``(input_ids, tag_positions)``, in one engine call."""
        outputs = self.llm.encode([{"prompt_token_ids": list(ids)} for ids, _ in items], pooling_task=POOLING_TASK,
                                  use_tqdm=False)
        rows = []
        for (ids, positions), out in zip(items, outputs, strict=True):
            probs = out.outputs.data
            if tuple(probs.shape) != (len(ids), PRM_LABELS):
                raise ValueError(f"vLLM returned {tuple(probs.shape)} pooled values for {len(ids)} tokens; a PRM "
                                 f"gives ({len(ids)}, {PRM_LABELS}): 2 labels (0 = bad, 1 = good) at every token")
            rows.append(probs[list(positions), 1].float().tolist())
        return rows


def main(argv: list[str]) -> None:
    """Entry point: ``argv[0]`` is the inherited socket's file descriptor."""
    worker_main(argv, ScoringEngine, lambda engine: vllm_engine_alive(engine.llm))


if __name__ == "__main__":
    main(sys.argv[1:])
