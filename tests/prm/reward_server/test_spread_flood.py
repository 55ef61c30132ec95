"""A half-open flood spread over many source addresses cannot starve honest clients (issue item 4): at its
connection cap the server sheds the connections that have sent the least of a request for the longest, whatever
their address, so honest clients on one address, each holding more connections than any one flood address, are
not the ones shed. Real HTTP against uvicorn on 127.0.0.1 and a tiny trained PRM; the flood is a process of its
own (half_open_flood.py) on 127.1.x.y. The cap is scaled down so the shape (a flood a little over the cap, a few
connections per address) runs in seconds. Nothing here bounds wall-clock time.
"""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from tests.prm.reward_server.test_connection_share import FLOOD
from tests.prm.reward_server.test_limits import GOOD, GUARD_S, _connections, _serve_watched, _until

CAP = 128  # the server's max_connections, scaled down from the default 1,024
FLOOD_CONNECTIONS = 256  # a little over the cap, as the 1,100 over 1,024
SOURCES = 64  # 4 connections per flood address, fewer than the honest address holds
HONEST = 32  # honest clients on 127.0.0.1, each a closed loop
REQUESTS = 10  # per honest client
BODY = json.dumps({"prompt": "q", "completion": GOOD})


@pytest.fixture(scope="module")
def capped_server(tiny_prm: Path):
    server, _, scorer = _serve_watched(tiny_prm, max_connections=CAP)
    yield server
    scorer.gate.set()
    server.stop()


def _fresh_connections(server) -> list[str]:
    """One client sending REQUESTS requests, a connection for each, head and body in two writes (as urllib3 and
    httpx send them): "200" or what went wrong, per request."""
    outcomes = []
    for _ in range(REQUESTS):
        conn = http.client.HTTPConnection(server.host, server.port, timeout=GUARD_S * 4)
        try:
            conn.putrequest("POST", "/score")
            conn.putheader("Content-Type", "application/json")
            conn.putheader("Content-Length", str(len(BODY)))
            conn.endheaders()
            conn.send(BODY.encode())
            reply = conn.getresponse()
            body = reply.read()
            outcomes.append("200" if reply.status == 200 else f"{reply.status} {body[:200]!r}")
        except (OSError, http.client.HTTPException) as err:
            outcomes.append(f"{type(err).__name__}: {err}")
        finally:
            conn.close()
    return outcomes


def _keep_alive(server) -> list[str]:
    """One client sending REQUESTS requests on a kept-alive connection (httpx sends head and body apart)."""
    outcomes = []
    with httpx.Client(base_url=server.url, timeout=GUARD_S * 4) as client:
        for _ in range(REQUESTS):
            try:
                reply = client.post("/score", content=BODY, headers={"Content-Type": "application/json"})
                outcomes.append("200" if reply.status_code == 200 else f"{reply.status_code} {reply.text[:200]}")
            except httpx.HTTPError as err:
                outcomes.append(f"{type(err).__name__}: {err}")
    return outcomes


@pytest.mark.parametrize("client", [_fresh_connections, _keep_alive], ids=["connection-per-request", "keep-alive"])
def test_honest_clients_are_served_beside_a_half_open_flood_from_many_addresses(capped_server, client):
    server = capped_server
    flood = subprocess.Popen([sys.executable, str(FLOOD), server.host, str(server.port), str(FLOOD_CONNECTIONS),
                              str(SOURCES)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert flood.stdout.readline().strip() == "ready"
        _until(lambda: _connections(server) >= CAP, "the flood holds the server's connection cap")
        with ThreadPoolExecutor(HONEST) as pool:
            outcomes = [o for per_client in pool.map(lambda _: client(server), range(HONEST)) for o in per_client]
    finally:
        flood.stdin.close()
        stats = json.loads(flood.stdout.readline() or "{}")
        flood.wait(GUARD_S)
    failed = [o for o in outcomes if o != "200"]
    assert failed == [], f"{len(failed)} of {len(outcomes)} honest requests failed: {failed[:3]}"
    assert stats.get("reopened", 0) > 0  # the flood was live: the server closed its connections to make room
    _until(lambda: _connections(server) < 16, "the flood's connections are gone")
