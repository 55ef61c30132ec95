"""One client holding the reward server's connection cap cannot starve the others (issue 38, item 10): at the cap
a newcomer takes the place of a connection that has not sent a whole request, the longest waiting first, and is
itself closed on arrival only when every connection holds a request in service. Real HTTP against uvicorn on
127.0.0.1 and a tiny trained PRM; the flood is a process of its own (tests/prm/reward_server/half_open_flood.py).
Nothing here bounds wall-clock time: timeouts only keep a broken server from hanging the test.
"""

from __future__ import annotations

import http.client
import json
import socket
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from prm.reward_server.app import RewardEngine, ServerConfig, ServerThread, create_app
from prm.reward_server.connection_share import WaitingConnections
from prm.reward_server.http_limits import HttpLimits
from prm.rewards.config import RewardConfig
from prm.scoring import load_prm
from tests.prm.reward_server.test_limits import GOOD, GUARD_S, _connections, _read_to_close, _serve_watched, _until

FLOOD = Path(__file__).with_name("half_open_flood.py")
HALF_OPEN = 1_100  # the attacker: more connections than the default cap of 1,024
HONEST = 64


# (events, newcomer, victim): events are (connection, stage) marks or (connection, None) when served
SHEDDING = [
    ([("a", "head"), ("b", "head")], "c", "a"),  # the longest waiting
    ([("a", "body"), ("b", "head")], "c", "b"),  # a head waited for before an older body
    ([("a", "head"), ("b", "head"), ("a", "head")], "c", "a"),  # marked again: keeps its place
    ([("a", "head"), ("b", "head"), ("a", "body")], "c", "b"),  # its head came in: it leaves the head stage
    ([("a", "head"), ("b", "head")], "a", "b"),  # never the newcomer itself
    ([("a", "head"), ("b", "body"), ("a", None)], "c", "b"),  # served: no longer waits
    ([("a", "head"), ("a", None)], "c", None),  # every request in service
]


@pytest.mark.parametrize("events,newcomer,victim", SHEDDING)
def test_the_connection_shed_is_the_least_advanced_the_longest(events, newcomer, victim):
    waiting = WaitingConnections()
    for conn, stage in events:
        if stage is None:
            waiting.served(conn)
        else:
            waiting.waiting(conn, stage)
    assert waiting.victim(newcomer) == victim


def test_a_stage_can_be_asked_for_alone():
    waiting = WaitingConnections()
    waiting.waiting("a", "body")
    assert waiting.victim("c", "head") is None and waiting.victim("c", "body") == "a"


@pytest.fixture(scope="module")
def default_server(tiny_prm: Path):
    """The server with its default limits (max_connections 1,024)."""
    engine = RewardEngine(lambda: load_prm(tiny_prm), ServerConfig(reward=RewardConfig(outcome_weight=0)))
    server = ServerThread(create_app(engine, model_name="tiny")).start()
    assert engine.batcher.wait_ready(120)
    yield server
    server.stop()


def _score_once(server: ServerThread) -> str:
    """One honest POST /score on a fresh connection, sent at once: "200" or what went wrong."""
    conn = http.client.HTTPConnection(server.host, server.port, timeout=GUARD_S * 4)
    try:
        conn.request("POST", "/score", body=json.dumps({"prompt": "q", "completion": GOOD}),
                     headers={"Content-Type": "application/json"})
        reply = conn.getresponse()
        body = reply.read()
        return "200" if reply.status == 200 and "score" in json.loads(body) else f"{reply.status} {body[:200]!r}"
    except (OSError, http.client.HTTPException) as err:
        return f"{type(err).__name__}: {err}"
    finally:
        conn.close()


def test_64_honest_clients_are_served_beside_1100_half_open_connections(default_server: ServerThread):
    cap = HttpLimits().max_connections
    flood = subprocess.Popen([sys.executable, str(FLOOD), default_server.host, str(default_server.port),
                              str(HALF_OPEN)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert flood.stdout.readline().strip() == "ready"
        _until(lambda: _connections(default_server) >= cap, "the flood holds the server's connection cap")
        with ThreadPoolExecutor(HONEST) as pool:
            outcomes = list(pool.map(lambda _: _score_once(default_server), range(HONEST)))
    finally:
        flood.stdin.close()
        stats = json.loads(flood.stdout.readline() or "{}")
        flood.wait(GUARD_S)
    failed = [o for o in outcomes if o != "200"]
    assert failed == [], f"{len(failed)} of {HONEST} honest requests failed: {failed[:3]}"
    assert stats.get("reopened", 0) > 0  # the flood was live: the server closed its connections to make room
    _until(lambda: _connections(default_server) < 16, "the flood's connections are gone")
    assert httpx.get(f"{default_server.url}/health", timeout=GUARD_S).status_code == 200


@pytest.fixture(scope="module")
def capped(tiny_prm: Path):
    """A server that holds at most 2 connections, with a gate that holds a request in service."""
    server, _, scorer = _serve_watched(tiny_prm, max_connections=2, read_timeout_s=300, header_timeout_s=300)
    yield server, scorer
    scorer.gate.set()
    server.stop()


def test_a_newcomer_at_the_cap_takes_the_place_of_the_longest_waiting_connection(capped):
    server, _ = capped
    first = socket.create_connection((server.host, server.port), timeout=GUARD_S)
    second = socket.create_connection((server.host, server.port), timeout=GUARD_S)
    try:
        _until(lambda: _connections(server) == 2, "the server holds 2 silent connections")
        second.sendall(b"POST /score HTTP/1.1\r\nHost: x\r\n")  # part of a head: waiting, but since later
        assert httpx.get(f"{server.url}/health", timeout=GUARD_S).status_code == 200  # a third: served
        reply = _read_to_close(first)  # the longest waiting was closed to make room, told why
        assert reply.startswith(b"HTTP/1.1 408 ") and b"connection cap" in reply, reply[:200]
        second.sendall(b"Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
        second.settimeout(GUARD_S)
        assert second.recv(64).startswith(b"HTTP/1.1 4")  # still open, answered (422: an empty sample)
    finally:
        first.close()
        second.close()
    _until(lambda: _connections(server) == 0, "the connections are gone")


def test_a_connection_whose_head_is_in_is_not_shed_for_a_newer_half_open_one(capped):
    """Its body still to come, the older connection waits longer, but it sent its head: the silent one goes."""
    server, _ = capped
    sent_head = socket.create_connection((server.host, server.port), timeout=GUARD_S)
    silent = None
    try:
        sent_head.sendall(b"POST /score HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                          b"Content-Length: 2\r\n\r\n")
        connections = server.server.server_state.connections
        _until(lambda: any(c.cycle is not None for c in list(connections)), "the server parsed the head")
        silent = socket.create_connection((server.host, server.port), timeout=GUARD_S)
        _until(lambda: _connections(server) == 2, "the server holds both connections")
        assert httpx.get(f"{server.url}/health", timeout=GUARD_S).status_code == 200  # a third: served
        reply = _read_to_close(silent)
        assert reply.startswith(b"HTTP/1.1 408 ") and b"connection cap" in reply, reply[:200]
        sent_head.sendall(b"{}")
        assert sent_head.recv(64).startswith(b"HTTP/1.1 4")  # still open, answered (422: an empty sample)
    finally:
        sent_head.close()
        if silent is not None:
            silent.close()
    _until(lambda: _connections(server) == 0, "the connections are gone")


def test_a_newcomer_is_closed_on_arrival_only_when_every_connection_is_in_service(capped):
    server, scorer = capped
    scorer.hold, scorer.gate = "held", threading.Event()
    held_now, lock = [0], threading.Lock()
    plain = type(scorer).encode

    def encode(problem, steps):  # counts the requests held at the gate: both must be in service
        if problem == "held":
            with lock:
                held_now[0] += 1
        return plain(scorer, problem, steps)

    scorer.encode = encode
    body = json.dumps({"prompt": "held", "completion": GOOD})
    try:
        with ThreadPoolExecutor(2) as pool:
            held = [pool.submit(httpx.post, f"{server.url}/score", content=body, timeout=GUARD_S * 4,
                                headers={"Content-Type": "application/json"}) for _ in range(2)]
            try:
                _until(lambda: held_now[0] == 2, "both requests are in service, held at the gate")
                with socket.create_connection((server.host, server.port), timeout=GUARD_S) as third:
                    assert _read_to_close(third) == b""  # closed at once: no connection could give way
            finally:
                scorer.gate.set()
            assert [f.result().status_code for f in held] == [200, 200]
    finally:
        del scorer.encode
        scorer.hold = None


def test_a_silent_connection_is_closed_after_the_header_timeout_not_the_read_timeout(tiny_prm: Path):
    server, _, scorer = _serve_watched(tiny_prm, read_timeout_s=300, header_timeout_s=0.5)
    try:
        with socket.create_connection((server.host, server.port), timeout=GUARD_S) as silent:
            reply = _read_to_close(silent)  # a server waiting the read timeout would leave recv to hit GUARD_S
        assert reply.startswith(b"HTTP/1.1 408 ") and b"not received within 0.5 s" in reply, reply[:200]
    finally:
        scorer.gate.set()
        server.stop()
