"""Which connection the reward server drops when one more arrives at its connection cap.

Closing the newcomer (as the server once did) hands the cap to whoever holds the most connections: one client
holding ~1,100 half-open ones made 14 of 14 honest requests fail for ~28 s (issue 38). Instead, at the cap the
server closes a connection that is *waiting*, that has not sent a whole request (connected and silent, or
part of a head or body), taken from the peer address holding the most connections, the one waiting longest
first; failing that, a kept-alive connection idle between requests, the longest idle first. A connection whose
request is in service is never dropped, and a newcomer is closed only when every connection is in service.
An honest client sends its request as soon as it connects, so it is the newest waiting connection for a few
milliseconds and the last one its peer's share would give up; a flood's oldest connections go first.
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from typing import Any


class ConnectionShare:
    """Open connections by peer, the waiting ones in the order they started to wait.

    A connection is any hashable object; :meth:`victim` never returns the one it is asked on behalf of.

    >>> share = ConnectionShare()
    >>> for name, peer in (("a1", "A"), ("a2", "A"), ("b1", "B")):
    ...     share.opened(name, peer)
    ...     share.waiting(name)
    >>> share.victim("b1")  # A holds the most connections: its longest-waiting one goes
    'a1'
    >>> share.closed("a1"); share.victim("b1")  # A and B hold one each: the longest waiting
    'a2'
    >>> share.served("a2"); share.served("b1"); share.victim("b1") is None  # every request in service
    True
    """

    def __init__(self) -> None:
        self.peers: dict[Any, str] = {}  # connection -> peer address
        self.per_peer: Counter[str] = Counter()  # open connections per peer address
        self._waiting: dict[str, OrderedDict[Any, None]] = {}  # peer -> connections without a whole request
        self._order = 0
        self._since: dict[Any, int] = {}  # connection -> when it started to wait (a counter, not a clock)

    def opened(self, conn: Any, peer: str) -> None:
        """``conn`` arrived from ``peer``."""
        self.peers[conn] = peer
        self.per_peer[peer] += 1

    def closed(self, conn: Any) -> None:
        """``conn`` is gone (or is being closed): it no longer counts for its peer."""
        self.served(conn)
        peer = self.peers.pop(conn, None)
        if peer is not None:
            self.per_peer[peer] -= 1
            if self.per_peer[peer] <= 0:
                del self.per_peer[peer]

    def waiting(self, conn: Any) -> None:
        """``conn`` waits for a whole request (it connected, or began sending its next one)."""
        peer = self.peers.get(conn)
        if peer is None:
            return
        queue = self._waiting.setdefault(peer, OrderedDict())
        if conn not in queue:
            self._order += 1
            self._since[conn] = self._order
            queue[conn] = None

    def served(self, conn: Any) -> None:
        """``conn``'s request is whole (in service) or the connection is closing: it no longer waits."""
        peer = self.peers.get(conn)
        queue = self._waiting.get(peer) if peer is not None else None
        if queue is not None and conn in queue:
            del queue[conn]
            if not queue:
                del self._waiting[peer]
        self._since.pop(conn, None)

    def victim(self, newcomer: Any) -> Any | None:
        """The waiting connection to close to make room for ``newcomer``: from the peer holding the most
        connections, the one waiting longest; None when no other connection waits."""
        best, best_key = None, None
        for peer, queue in self._waiting.items():
            conn = next((c for c in queue if c is not newcomer), None)
            if conn is None:
                continue
            key = (-self.per_peer[peer], self._since[conn])
            if best_key is None or key < best_key:
                best, best_key = conn, key
        return best
