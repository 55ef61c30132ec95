"""A client holding N half-open connections to HOST:PORT: connected, sending nothing, each reopened as soon as
the server closes it, until its stdin closes. Used by tests/prm/reward_server/test_connection_share.py and
benchmarks/reward_server.py (a process of its own, as an attacker's would be).

Run: ``python tests/prm/reward_server/half_open_flood.py HOST PORT N``. Prints ``ready`` once all N are connected,
and on exit one JSON line: ``{"held": N, "reopened": k}`` (k: connections the server closed and this reopened).
"""

from __future__ import annotations

import json
import selectors
import socket
import sys


def main() -> None:
    host, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    sel = selectors.DefaultSelector()
    sel.register(sys.stdin, selectors.EVENT_READ, None)
    reopened = 0

    def open_one(blocking: bool) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if blocking:
            sock.settimeout(30)
            sock.connect((host, port))  # done once the kernel completes the handshake, accepted or not
        sock.setblocking(False)
        if not blocking:
            sock.connect_ex((host, port))
        sel.register(sock, selectors.EVENT_READ, sock)

    for _ in range(n):
        open_one(True)
    print("ready", flush=True)
    while True:
        for key, _ in sel.select(timeout=1.0):
            sock = key.data
            if sock is None:  # stdin: readable means closed (the parent is done)
                print(json.dumps({"held": n, "reopened": reopened}), flush=True)
                return
            sel.unregister(sock)  # readable: the server closed it (or wrote its 408 first)
            sock.close()
            open_one(False)
            reopened += 1


if __name__ == "__main__":
    main()
