"""Which connection the reward server sheds when one more arrives at its connection cap.

Closing the newcomer (as the server once did) hands the cap to whoever holds the most connections (issue 38).
Shedding from the peer address holding the most connections (as it did next) turns the cap against honest
clients when a flood is spread over many addresses: 1,100 half-open connections from 110-550 addresses hold a
few each, fewer than one honest client machine with dozens of requests under way, so its requests were the ones
shed (22 of 3,358 failed; 62 of 2,764 with keep-alive, whose bodies arrive apart from their heads).

So a connection is shed by what it did, not where it came from: first one that has not sent its request's
whole head (request line and headers), the one waiting longest; then, in :mod:`~prm.reward_server.http_limits`,
a kept-alive connection idle between requests; then one whose head is in but whose body is not, the longest
waiting. A request in service is never shed. An honest client sends its head as soon as it connects, so it
leaves the head stage within milliseconds and is the newest there until it does; a half-open or slow-drip
connection stays in the head stage for its whole life and reaches the front. Age, not bytes received, orders a
stage: a drip of one byte a second makes progress in bytes without being any less idle.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Literal

Stage = Literal["head", "body"]


class WaitingConnections:
    """Connections without a whole request, by stage, each stage in the order its connections began to wait.

    A connection is any hashable object; :meth:`victim` never returns the one it is asked on behalf of.

    >>> waiting = WaitingConnections()
    >>> for name in ("a1", "b1", "a2"):
    ...     waiting.waiting(name, "head")
    >>> waiting.waiting("a1", "body")  # a1's head is in: it leaves the head stage
    >>> waiting.victim("a2")  # the longest waiting for a head, whatever its address
    'b1'
    >>> waiting.served("b1"); waiting.victim("a2")  # no other head is awaited: the longest waiting for a body
    'a1'
    >>> waiting.served("a1"); waiting.victim("a2") is None  # every other request in service
    True
    """

    def __init__(self) -> None:
        self._stages: dict[Stage, OrderedDict[Any, None]] = {"head": OrderedDict(), "body": OrderedDict()}
        self._stage_of: dict[Any, Stage] = {}

    def waiting(self, conn: Any, stage: Stage) -> None:
        """``conn`` waits for its request's ``stage``; it keeps its place if it already waited for that stage."""
        if self._stage_of.get(conn) == stage:
            return
        self.served(conn)
        self._stage_of[conn] = stage
        self._stages[stage][conn] = None

    def served(self, conn: Any) -> None:
        """``conn``'s request is whole (in service) or the connection is gone: it no longer waits."""
        stage = self._stage_of.pop(conn, None)
        if stage is not None:
            del self._stages[stage][conn]

    def victim(self, newcomer: Any, stage: Stage | None = None) -> Any | None:
        """The connection to shed for ``newcomer``: the longest waiting for ``stage``, or with None for a head,
        else for a body; None when no other connection waits."""
        for queue in (self._stages[stage],) if stage else self._stages.values():
            conn = next((c for c in queue if c is not newcomer), None)
            if conn is not None:
                return conn
        return None
