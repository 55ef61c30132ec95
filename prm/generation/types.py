"""Request and result rows shared by every backend."""

from __future__ import annotations

from dataclasses import dataclass, field

from prm.generation.constants import FINISH_NOT_RUN, STATUS_ERROR, STATUS_OK


@dataclass(frozen=True)
class GenerationRequest:
    """One prompt to sample ``n`` completions for."""

    prompt: str  # fully formatted prompt text (see prm.format.format_prompt)
    n: int = 1  # completions to sample for this prompt
    max_tokens: int = 256  # generation budget per completion; arithmetic solutions fit in ~100
    temperature: float = 1.0  # 1.0 keeps the policy's own distribution, which MC labeling assumes
    top_p: float = 1.0  # 1.0 = no nucleus truncation, for the same reason
    stop: tuple[str, ...] = ()  # extra stop strings; EOS always stops
    seed: int | None = None  # per-request seed: same seed + same prompt -> same texts on one backend


@dataclass(frozen=True)
class Completion:
    """The result row of one request: ``n`` texts, or an error that left the rest of the batch intact."""

    texts: tuple[str, ...]  # one per sample; empty when status == "error"
    finish_reasons: tuple[str, ...]  # per sample: "stop" (EOS/stop string) or "length" (budget hit)
    prompt_tokens: int  # prompt length in tokens as the engine counted it (0 if unknown)
    completion_tokens: tuple[int, ...]  # generated tokens per sample, from the engine's own output
    status: str = STATUS_OK  # "ok" or "error"
    error: str | None = None  # what went wrong for this row, when status == "error"
    index: int = 0  # position of the request in the call, so rows map back after filtering

    @property
    def ok(self) -> bool:
        """Whether the row holds usable texts."""
        return self.status == STATUS_OK

    @property
    def total_completion_tokens(self) -> int:
        """Generated tokens summed over the samples."""
        return sum(self.completion_tokens)

    @staticmethod
    def failed(index: int, error: str, prompt_tokens: int = 0) -> Completion:
        """An error row for request ``index``.

        >>> Completion.failed(3, "empty prompt").status
        'error'
        """
        return Completion(
            texts=(),
            finish_reasons=(FINISH_NOT_RUN,),
            prompt_tokens=prompt_tokens,
            completion_tokens=(),
            status=STATUS_ERROR,
            error=error,
            index=index,
        )


@dataclass(frozen=True)
class BackendInfo:
    """What a backend serves, for metadata and prompt-length checks."""

    backend: str  # "vllm" or "openai"
    model: str  # resolved model path or served model name
    max_model_len: int  # context length: prompt + completion tokens
    extra: dict[str, str] = field(default_factory=dict)  # versions, device, server url
