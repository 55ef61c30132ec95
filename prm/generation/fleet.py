"""Fleet: which of several OpenAI-compatible servers a request goes to, and which servers are up.

Pure bookkeeping, no HTTP: the backend (:mod:`prm.generation.openai_backend`) asks :meth:`Fleet.acquire` for a
server, sends the request, and reports back with :meth:`Fleet.release`. The rules:

- each server takes at most ``max_in_flight`` requests at once; a caller waits in ``acquire`` for a slot;
- a request goes to the up server with the fewest in flight (ties: the one that has served fewest);
- a failed connection marks the server down; while another server is up it gets no requests, and once
  ``reprobe_s`` have passed a caller runs ``probe`` on it (``GET /models``) and it is up again if that answers;
- when no server is up, every server is eligible again: the requests themselves then probe, with the caller's
  retries and backoff, so one server behaves exactly like a client without a fleet.

>>> fleet = Fleet(["http://a/v1", "http://b/v1"], max_in_flight=1, probe=lambda url: False)
>>> first, second = fleet.acquire(), fleet.acquire()
>>> first, second
('http://a/v1', 'http://b/v1')
>>> fleet.release(first, ok=False)  # a's connection failed: it is down
>>> fleet.release(second, ok=True)
>>> fleet.acquire(), fleet.up
('http://b/v1', ('http://b/v1',))
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

# Seconds a server that failed to connect sits out before a health probe: long enough not to spend requests'
# time on a server that is restarting (a vLLM server loads in ~1 min on CPU), short enough to use it again soon.
REPROBE_S = 10.0


@dataclass
class ServerState:
    """One server's health and load, as the fleet sees it."""

    url: str
    in_flight: int = 0  # requests sent and not yet released
    up: bool = True  # False after a failed connection, until a probe or a request succeeds
    retry_at: float = 0.0  # when a down server may be probed
    probing: bool = False  # a caller is probing it now (so only one does)
    served: int = 0  # requests it answered (any HTTP status)
    failures: int = 0  # failed connections and failed probes


class Fleet:
    """Server selection and health for several servers of the same model; thread-safe."""

    def __init__(
        self,
        urls: Sequence[str],
        max_in_flight: int,
        probe: Callable[[str], bool],  # url -> whether the server answers; returns False rather than raising
        reprobe_s: float = REPROBE_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not urls:
            raise ValueError("a fleet needs at least one server URL")
        if max_in_flight < 1:
            raise ValueError(f"max_in_flight={max_in_flight} must be >= 1")
        self.servers = {url: ServerState(url) for url in urls}
        self.max_in_flight = max_in_flight
        self._probe = probe
        self._reprobe_s = reprobe_s
        self._clock = clock
        self._cond = threading.Condition()

    @property
    def up(self) -> tuple[str, ...]:
        """The servers currently counted as up."""
        with self._cond:
            return tuple(s.url for s in self.servers.values() if s.up)

    def acquire(self, avoid: str | None = None) -> str:
        """A server with a free slot, reserved for one request; waits for a slot when all are busy.

        ``avoid`` (the server a retry just failed on) is only chosen when no other server has a free slot.
        """
        while True:
            with self._cond:
                due = self._due_for_probe()
                if due is None:
                    chosen = self._pick(avoid)
                    if chosen is not None:
                        chosen.in_flight += 1
                        return chosen.url
                    self._cond.wait(timeout=self._wait_s())
                    continue
                due.probing = True
            self._run_probe(due)  # outside the lock: a probe waits on the network

    def release(self, url: str, ok: bool) -> None:
        """Give back ``url``'s slot: ``ok`` if the server answered (any status), False if the connection failed."""
        with self._cond:
            server = self.servers[url]
            server.in_flight -= 1
            if ok:
                server.served += 1
                server.up = True
            else:
                self._mark_down(server)
            self._cond.notify_all()

    def _pick(self, avoid: str | None) -> ServerState | None:
        candidates = [s for s in self.servers.values() if s.up] or list(self.servers.values())
        free = [s for s in candidates if s.in_flight < self.max_in_flight]
        preferred = [s for s in free if s.url != avoid] or free
        return min(preferred, key=lambda s: (s.in_flight, s.served), default=None)

    def _due_for_probe(self) -> ServerState | None:
        """A down server whose sit-out is over, while another is up (else requests probe: see the module doc)."""
        if not any(s.up for s in self.servers.values()):
            return None
        now = self._clock()
        return next((s for s in self.servers.values() if not s.up and not s.probing and s.retry_at <= now), None)

    def _wait_s(self) -> float | None:
        """How long ``acquire`` may sleep before a down server is due for a probe (None: until a release)."""
        if not any(s.up for s in self.servers.values()):
            return None
        due = [s.retry_at for s in self.servers.values() if not s.up and not s.probing]
        return max(0.0, min(due) - self._clock()) if due else None

    def _run_probe(self, server: ServerState) -> None:
        healthy = False
        try:
            healthy = bool(self._probe(server.url))
        finally:  # a probe that raises (it should return False) still leaves the server down, to be probed again
            with self._cond:
                server.probing = False
                if healthy:
                    server.up = True
                else:
                    self._mark_down(server)
                self._cond.notify_all()

    def _mark_down(self, server: ServerState) -> None:
        server.up = False
        server.failures += 1
        server.retry_at = self._clock() + self._reprobe_s
