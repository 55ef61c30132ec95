"""A client holding N half-open connections to HOST:PORT: connected, sending nothing, each reopened as soon as
the server closes it, until its stdin closes. Used by tests/prm/reward_server/test_connection_share.py and
benchmarks/reward_server.py (a process of its own, as an attacker's would be).

Run: ``python tests/prm/reward_server/half_open_flood.py HOST PORT N [SOURCES]``. With SOURCES > 1 the
connections are spread round-robin over that many source addresses, 127.1.0.1, 127.1.0.2, ... (Linux routes all
of 127.0.0.0/8 to loopback), as a flood from many machines would be; HOST must then be on loopback. Prints
``ready`` once all N are connected, and on exit one JSON line: ``{"held": N, "reopened": k}`` (k: connections the
server closed and this reopened).
"""

from __future__ import annotations

import json
import selectors
import socket
import sys


def source_address(k: int) -> str:
    """The k-th spread source address (k from 0): 127.1.0.1, ..., 127.1.0.250, 127.1.1.1, ..."""
    return f"127.1.{k // 250}.{k % 250 + 1}"


def main() -> None:
    host, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    sources = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    sel = selectors.DefaultSelector()
    sel.register(sys.stdin, selectors.EVENT_READ, None)
    reopened = 0

    def open_one(k: int, blocking: bool) -> None:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if sources > 1:
            sock.bind((source_address(k % sources), 0))
        if blocking:
            sock.settimeout(30)
            sock.connect((host, port))  # done once the kernel completes the handshake, accepted or not
        sock.setblocking(False)
        if not blocking:
            sock.connect_ex((host, port))
        sel.register(sock, selectors.EVENT_READ, (k, sock))

    for k in range(n):
        open_one(k, True)
    print("ready", flush=True)
    while True:
        for key, _ in sel.select(timeout=1.0):
            if key.data is None:  # stdin: readable means closed (the parent is done)
                print(json.dumps({"held": n, "reopened": reopened}), flush=True)
                return
            k, sock = key.data
            sel.unregister(sock)  # readable: the server closed it (or wrote its 408 first)
            sock.close()
            open_one(k, False)
            reopened += 1


if __name__ == "__main__":
    main()
