"""The reward server's HTTP limits: what one client may send and hold before any endpoint runs.

* a body over ``max_body_bytes`` gets a 413, and bodies are read only while those being served hold less than
  ``max_inflight_body_bytes`` (:class:`BodyLimit`, ASGI middleware; a waiting body stays in its socket);
* a request line + headers over ``max_header_bytes`` get a 431 and the connection closed, every byte up to the
  blank line that ends them counted (:class:`HeadSize`) before the parser sees it, so a 200 MB header is never
  parsed whole on the event loop;
* a connection whose request head has not arrived ``header_timeout_s`` after it opened, or whose request is not
  fully received ``read_timeout_s`` after its first byte (after its head, for the body), gets a 408 and is
  closed, so a silent or slow-drip client cannot hold a connection; an idle keep-alive connection is closed by
  uvicorn after ``timeout_keep_alive`` (5 s);
* at ``max_connections`` open connections, one more makes room by closing a connection that has not sent a
  whole head, the longest waiting first whatever its address; else one idle between requests; else one whose
  body has not arrived (:mod:`prm.reward_server.connection_share`); it is itself closed on arrival only when
  every connection holds a request in service. Half-open connections cannot use up the process's file
  descriptors, nor can a flood of them, from one address or many, lock honest clients out.

The last three live in a subclass of uvicorn's own HTTP protocol (httptools when installed, else h11), built
by :func:`uvicorn_config`. uvicorn's ``limit_concurrency`` is not used: it answers 503, and a client's
flood is the client's problem (a closed connection), not a server error.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import resource
from collections.abc import Callable
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

from prm.reward_server.connection_share import Stage, WaitingConnections
from prm.reward_server.constants import FD_HEADROOM

__all__ = ["BodyLimit", "ByteBudget", "HttpLimits", "uvicorn_config"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class HttpLimits:
    """Bounds on what one client sends and holds.

    >>> HttpLimits(read_timeout_s=0)
    Traceback (most recent call last):
    ...
    ValueError: read_timeout_s=0 must be > 0 (seconds a client has to send one whole request)
    """

    # Request bodies above this get a 413. OpenRLHF up to v0.9.0 posts its whole rollout batch in one request:
    # 1,024 samples of prompt + response, 2-16 kB each with responses of up to 4k tokens, so up to ~16 MB; 32 MiB
    # holds that twice over, and one sample (OpenRLHF from v0.9.1, verl) is a few kB.
    max_body_bytes: int = 32 << 20
    # Bytes of the request bodies being read or served at once (a body without a Content-Length counts as
    # max_body_bytes); the next body waits unread until it fits. 4 max-size bodies, or tens of thousands of RL
    # samples (1-10 kB each): it bounds memory, not honest throughput.
    max_inflight_body_bytes: int = 128 << 20
    # Request line + headers above this get a 431. 64 KiB is 8x the 8 KiB per header line most servers allow
    # (nginx's large_client_header_buffers); an RL client sends a few hundred bytes. Unbounded, a 200 MB header
    # took 33 s to parse on the event loop, /health waiting behind it.
    max_header_bytes: int = 64 << 10
    # Seconds a client has to send a whole request, headers and body, from its first byte. A 32 MiB body (a
    # whole OpenRLHF batch) takes 27 s at 10 Mbit/s; RL clients on the cluster's network take milliseconds.
    # Scoring time does not count.
    read_timeout_s: float = 30.0
    # Seconds from a connection's opening to its first request's whole head (request line and headers). HTTP
    # clients send the head at once (a few hundred bytes); a connection silent this long is half-open, and holds
    # a slot of max_connections another client could use. Capped by read_timeout_s.
    header_timeout_s: float = 10.0
    # Open connections; one more is closed when accepted. OpenRLHF and verl open one per concurrent sample
    # (hundreds); each holds a file descriptor and up to ~320 KiB of unread input (uvicorn's 64 KiB body
    # buffer plus one 256 KiB read), and 21,000 half-open ones ran the process out of descriptors (ulimit -n
    # 20000). Lowered at start to the process's descriptor limit less FD_HEADROOM.
    max_connections: int = 1024

    def __post_init__(self) -> None:
        bounds = {"max_body_bytes": "bytes per request body", "max_header_bytes": "bytes of request line and headers",
                  "max_connections": "open connections"}
        for name, what in bounds.items():
            if getattr(self, name) < 1:
                raise ValueError(f"{name}={getattr(self, name)} must be >= 1 ({what})")
        if self.max_inflight_body_bytes < self.max_body_bytes:
            raise ValueError(f"max_inflight_body_bytes={self.max_inflight_body_bytes} must be >= max_body_bytes="
                             f"{self.max_body_bytes}, or a body of the largest size allowed could never be read")
        if not self.read_timeout_s > 0:
            raise ValueError(f"read_timeout_s={self.read_timeout_s} must be > 0 (seconds a client has to send one "
                             "whole request)")
        if not self.header_timeout_s > 0:
            raise ValueError(f"header_timeout_s={self.header_timeout_s} must be > 0 (seconds a new connection has to "
                             "send its request's head)")


def _reply(status: int, detail: str) -> bytes:
    """A complete HTTP/1.1 response that closes the connection, for answers given before the app runs."""
    body = json.dumps({"detail": detail}).encode()
    head = (f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\nconnection: close\r\n\r\n")
    return head.encode() + body


# The blank line that ends a head, at the earliest either parser may see it: httptools wants CRLF CRLF, h11 also
# takes a bare LF; both match here, so no head byte goes uncounted.
_BLANK_LINE = re.compile(rb"\n\r?\n")


class HeadSize:
    r"""Bytes of one request head (request line and headers) as its chunks arrive, up to and including the blank
    line that ends it, so the chunk that completes a head counts too.

    >>> head = HeadSize()
    >>> head.add(b"GET / HTTP/1.1\r\nHost: x"), head.size
    (False, 23)
    >>> head.add(b"\r\n\r\n{body}"), head.size  # the body after the blank line is not head
    (True, 27)
    """

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """The next bytes start a new head."""
        self.size, self._tail, self._started, self.ended = 0, b"", False, False

    def add(self, data: bytes) -> bool:
        """Count ``data``'s bytes up to the end of the head; True when the head has ended (bytes after it, a body
        or a request the parser holds back, are not this head's)."""
        if self.ended:
            return True
        start = 0
        if not self._started:  # CR and LF before a request line are skipped by the parsers, not a blank line
            start = len(data) - len(data.lstrip(b"\r\n"))
            if start == len(data):
                self.size += len(data)
                return False
            self._started = True
        window = self._tail + data[start:]
        end = _BLANK_LINE.search(window)
        if end is not None:
            self.size += start + end.end() - len(self._tail)
            self.ended = True
            return True
        self.size += len(data)
        self._tail = window[-2:]
        return False


def connection_cap(limits: HttpLimits) -> int:
    """``max_connections``, lowered to leave FD_HEADROOM of the process's soft descriptor limit."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft - FD_HEADROOM >= limits.max_connections:
        return limits.max_connections
    cap = max(1, soft - FD_HEADROOM)
    logger.warning("max_connections=%d lowered to %d: the process may open %d files (ulimit -n) and keeps %d "
                   "for the model, threads and logs; raise ulimit -n to allow more", limits.max_connections, cap,
                   soft, FD_HEADROOM)
    return cap


def limited_protocol(limits: HttpLimits) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol class (httptools, else h11) with the header, read-time and connection limits."""
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    cap = connection_cap(limits)
    head_timeout = min(limits.header_timeout_s, limits.read_timeout_s)
    share = WaitingConnections()  # the connections without a whole request, by stage, longest waiting first
    dropping: set[Any] = set()  # closed by these limits, not yet gone from uvicorn's connection set
    counts = {"refused": 0, "dropped": 0}  # logged at powers of two so a flood does not flood the log

    def count(what: str, message: str, *args: Any) -> None:
        counts[what] += 1
        if counts[what] & (counts[what] - 1) == 0:
            logger.warning(message, counts[what], *args)

    class LimitedProtocol(AutoHTTPProtocol):  # type: ignore[misc, valid-type]
        # Reads only what uvicorn's two protocols share: self.cycle (the request being served, made when its
        # head is parsed), cycle.more_body (False once its body is in), cycle.response_complete, the transport
        # and the connection set.
        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._head = HeadSize()
            self._deadline: asyncio.TimerHandle | None = None
            self._timeout = head_timeout
            self._last_seen = self.loop.time()
            if len(self.connections) - len(dropping) > cap:
                victim = share.victim(self, "head") or self._longest_idle() or share.victim(self, "body")
                if victim is None:  # every other connection holds a request in service
                    count("refused", "%d connections closed on arrival: max_connections=%d, all in service", cap)
                    self._close()
                    return
                count("dropped", "%d waiting or idle connections closed to make room at max_connections=%d", cap)
                victim._make_room()
            self._arm(head_timeout, "head")

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            dropping.discard(self)
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            self._last_seen = self.loop.time()
            cycle, in_head = self.cycle, self._between_requests()  # in_head: these bytes start or continue a head
            if in_head:
                if self._deadline is None:  # the first bytes of the next request on a kept-alive connection
                    self._arm(limits.read_timeout_s, "head")
                self._head.add(data)
                if self._head.size > limits.max_header_bytes:  # refused before the parser reads it
                    self._refuse(431, f"request line and headers of {self._head.size}+ bytes are over this "
                                      f"server's limit of {limits.max_header_bytes} bytes; send fewer or shorter "
                                      "headers")
                    return
            super().data_received(data)
            if self.transport.is_closing():
                return
            if self.cycle is not cycle:  # a request's head was parsed in this chunk
                self._head.reset()
                if self.cycle is not None and self.cycle.more_body:
                    if self._timeout != limits.read_timeout_s:
                        self._disarm()  # the head was on time: its body has read_timeout_s
                        self._arm(limits.read_timeout_s, "body")
                    else:
                        share.waiting(self, "body")  # shed only after every connection still sending a head
            if self.cycle is not None and not self.cycle.more_body:
                self._disarm()  # the whole request is in: scoring it may take as long as it takes

        def _between_requests(self) -> bool:
            return self.cycle is None or not self.cycle.more_body

        def _arm(self, timeout: float, stage: Stage) -> None:
            self._timeout = timeout
            self._deadline = self.loop.call_later(timeout, self._timed_out)
            share.waiting(self, stage)

        def _disarm(self) -> None:
            share.served(self)
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _timed_out(self) -> None:
            self._deadline = None
            if not self.transport.is_closing():
                self._refuse(408, f"the request was not received within {self._timeout:g} s; send it whole and at "
                                  "once")

        def _longest_idle(self) -> LimitedProtocol | None:
            """A kept-alive connection between requests (its last response sent), the longest idle; or None."""
            idle = [c for c in self.connections if c is not self and c not in dropping and c._deadline is None
                    and c.cycle is not None and c.cycle.response_complete]
            return min(idle, key=lambda c: c._last_seen, default=None)

        def _make_room(self) -> None:
            if self._deadline is None:  # idle between requests: closed as an idle keep-alive connection is
                self._close()
            else:
                self._refuse(408, "the request was not received whole before the server, at its connection cap, "
                                  "needed room for other clients; send it whole and at once")

        def _close(self) -> None:
            self._disarm()
            dropping.add(self)
            self.transport.close()

        def _refuse(self, status: int, detail: str) -> None:
            cycle = self.cycle
            # Answered unless a response to this request began (an early 413 while its body still arrives) or
            # one to an earlier request is still being written.
            if cycle is None or not cycle.response_started or (cycle.response_complete and not cycle.more_body):
                self.transport.write(_reply(status, detail))
            self._close()

    return LimitedProtocol


def uvicorn_config(app: Any, limits: HttpLimits, **kwargs: Any) -> Any:
    """``uvicorn.Config`` for ``app`` under ``limits`` (``kwargs``: uvicorn's own, e.g. ``log_level``)."""
    import uvicorn

    # h11 enforces the header bound itself when it is the protocol (with a 400); httptools has no bound.
    return uvicorn.Config(app, http=limited_protocol(limits), h11_max_incomplete_event_size=limits.max_header_bytes,
                          **kwargs)


class ByteBudget:
    """Bytes handed out up to ``cap``; a taker waits until its share fits (callers never ask for more than cap)."""

    def __init__(self, cap: int) -> None:
        self.cap, self.used, self.waiting = cap, 0, 0
        self._changed = asyncio.Condition()

    async def take(self, n: int) -> None:
        async with self._changed:
            self.waiting += 1
            try:
                await self._changed.wait_for(lambda: self.used + n <= self.cap)
            finally:
                self.waiting -= 1
            self.used += n

    async def give(self, n: int) -> None:
        async with self._changed:
            self.used -= n
            self._changed.notify_all()


class BodyLimit:
    """ASGI middleware: a request body over ``limits.max_body_bytes`` gets a 413 before any endpoint reads it,
    and a body is read only once it fits in ``limits.max_inflight_body_bytes`` beside the bodies in service.

    A declared ``Content-Length`` is checked first; a chunked body is counted as it arrives. ``inflight`` is the
    app's :class:`ByteBudget` of ``max_inflight_body_bytes`` (``/health`` reports it).
    """

    def __init__(self, app: Any, max_bytes: int, inflight: ByteBudget) -> None:
        self.app, self.max_bytes, self.inflight = app, max_bytes, inflight

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length", b"")
        size = int(declared) if declared.isdigit() else None
        if size is not None and size > self.max_bytes:
            return await self._reject(scope, receive, send, size)
        # HTTP/1.1: a body has a Content-Length or is chunked (its size unknown: the most it may be); else none.
        chunked = b"chunked" in headers.get(b"transfer-encoding", b"").lower()
        share = size if size is not None else self.max_bytes if chunked else 0
        await self.inflight.take(share)
        try:
            return await self._read_and_serve(scope, receive, send)
        finally:
            await self.inflight.give(share)

    async def _read_and_serve(self, scope: dict, receive: Callable, send: Callable) -> None:
        chunks, size, more = [], 0, True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                return await self._reject(scope, receive, send, size)
            chunks.append(chunk)
            more = message.get("more_body", False)
        body, replayed = b"".join(chunks), False
        del chunks  # the body's bytes are held once while it is served

        async def replay() -> dict:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        return await self.app(scope, replay, send)

    async def _reject(self, scope: dict, receive: Callable, send: Callable, size: int) -> None:
        from fastapi.responses import JSONResponse

        detail = (f"request body of {size}+ bytes is over this server's limit of {self.max_bytes} bytes "
                  "(--max-body-bytes); send fewer or shorter samples per request")
        await JSONResponse({"detail": detail}, status_code=413)(scope, receive, send)
