"""The reward server against hostile clients, over real HTTP (uvicorn on 127.0.0.1, a tiny trained PRM).

Oversized headers get a 431 or a closed connection, slow clients a 408 (connections over the cap:
test_connection_share.py); padded and over-context completions cost about what an honest one does, tokenizing
happens in the request's thread without holding up other requests' forward passes, and no probe gets a 5xx. Nothing here
bounds wall-clock time: ordering is shown with events, cost with CPU time or counted characters.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
import time
from pathlib import Path

import httpx
import pytest

from prm.reward_server.app import RewardEngine, ServerConfig, ServerThread, create_app
from prm.rewards.config import RewardConfig
from prm.scoring import load_prm

GOOD = "3+4 = 7\n7+2 = 9\nAnswer: 9"
JSON = {"Content-Type": "application/json"}
GUARD_S = 30  # socket timeout: a server that never answers fails the test instead of hanging it


class Watched:
    """A real scorer that counts the characters tokenized through ``encode`` (the fitting done in request
    threads), the largest item a batch is handed, and can hold ``encode`` for one problem on a gate."""

    def __init__(self, scorer) -> None:
        self.scorer = scorer
        self.encoded_chars = 0
        self.largest_batched = 0
        self.hold: str | None = None
        self.entered, self.gate = threading.Event(), threading.Event()

    @property
    def max_length(self) -> int:
        return self.scorer.max_length

    def encode(self, problem, steps):
        self.encoded_chars += len(problem) + sum(len(s) for s in steps)
        if problem == self.hold:
            self.entered.set()
            assert self.gate.wait(120), "the test never opened the gate"
        return self.scorer.encode(problem, steps)

    def score_batch(self, items, batch_size=None):
        self.largest_batched = max(self.largest_batched, *(len(p) + sum(len(s) for s in steps) for p, steps in items))
        return self.scorer.score_batch(items, batch_size=batch_size)


def _serve(engine: RewardEngine) -> ServerThread:
    server = ServerThread(create_app(engine, model_name="tiny")).start()
    assert engine.batcher.wait_ready(120)
    return server


def _serve_watched(tiny_prm: Path, **limits) -> tuple[ServerThread, RewardEngine, Watched]:
    from prm.reward_server.http_limits import HttpLimits

    made: list[Watched] = []

    def load() -> Watched:
        made.append(Watched(load_prm(tiny_prm)))
        return made[0]

    engine = RewardEngine(load, ServerConfig(reward=RewardConfig(outcome_weight=0), http=HttpLimits(**limits)))
    return _serve(engine), engine, made[0]


@pytest.fixture(scope="module")
def watched(tiny_prm: Path):
    server, engine, scorer = _serve_watched(tiny_prm)
    yield server, engine, scorer
    scorer.gate.set()
    server.stop()


def _raw(server: ServerThread, data: bytes) -> bytes:
    """Send ``data`` on a fresh connection and read until the server closes it ("" when it reset it)."""
    with socket.create_connection((server.host, server.port), timeout=GUARD_S) as sock:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # closed while still sending: refused
            sock.sendall(data)
        return _read_to_close(sock)


def _read_to_close(sock: socket.socket) -> bytes:
    chunks = []
    try:
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    except ConnectionResetError:
        pass
    return b"".join(chunks)


# ---- headers, slow clients, connection floods -----------------------------------------------------------
def test_an_oversized_header_gets_431_or_a_closed_connection(watched):
    server, _, _ = watched
    reply = _raw(server, b"GET /health HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"a" * (8 << 20) + b"\r\n\r\n")
    assert reply == b"" or reply.startswith(b"HTTP/1.1 431 "), reply[:200]
    assert b"limit of 65536 bytes" in reply or reply == b""
    assert httpx.get(f"{server.url}/health", timeout=GUARD_S).status_code == 200


def _head_of(size: int) -> bytes:
    """A GET /health head of exactly ``size`` bytes, its blank line included, padded in one header."""
    start, end = b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Pad: ", b"\r\n\r\n"
    return start + b"a" * (size - len(start) - len(end)) + end


@pytest.mark.parametrize("size,status", [(60_000, 200), (65_536, 200), (66_000, 431), (100_000, 431)])
def test_the_header_limit_counts_every_byte_of_the_head(watched, size, status):
    """Sent at once, a head just over 64 KiB arrives in the read that completes it: that read counts too."""
    server, _, _ = watched
    reply = _raw(server, _head_of(size))
    assert reply.startswith(f"HTTP/1.1 {status} ".encode()), reply[:200]
    if status == 431:
        assert b"limit of 65536 bytes" in reply


def _limited(tiny_prm: Path, **limits):
    from prm.reward_server.http_limits import HttpLimits

    config = ServerConfig(reward=RewardConfig(outcome_weight=0), http=HttpLimits(**limits))
    return _serve(RewardEngine(lambda: load_prm(tiny_prm), config))


@pytest.fixture(scope="module")
def impatient(tiny_prm: Path):
    """A server that gives a client half a second to send a request."""
    server = _limited(tiny_prm, read_timeout_s=0.5)
    yield server
    server.stop()


SLOW = [
    ("nothing-sent", b""),
    ("half-a-head", b"POST /score HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"),
    ("half-a-body", b"POST /score HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 99\r\n"
                    b"\r\n{"),
]


@pytest.mark.parametrize("sent", [s for _, s in SLOW], ids=[name for name, _ in SLOW])
def test_a_client_that_stops_sending_gets_408_and_a_closed_connection(impatient, sent):
    reply = _raw(impatient, sent)  # then silence: the server must close, or recv hits GUARD_S and the test fails
    assert reply.startswith(b"HTTP/1.1 408 "), reply[:200]
    assert b"not received within 0.5 s" in reply


def _connections(server: ServerThread) -> int:
    return len(server.server.server_state.connections)


def _until(predicate, what: str) -> None:
    for _ in range(3000):  # bounded: 3000 polls of 10 ms
        if predicate():
            return
        time.sleep(0.01)
    raise AssertionError(f"never happened: {what}")


def test_a_padded_completion_costs_milliseconds_not_seconds(watched):
    server, _, _ = watched
    body = {"prompt": "q", "completion": GOOD + "<pad>" * 200_000}  # 1 MB of padding, under the body limit
    with httpx.Client(base_url=server.url, timeout=120) as client:
        plain = client.post("/steps", json={"prompt": "q", "completion": GOOD}).json()
        started = time.process_time()
        r = client.post("/steps", json=body)
        spent = time.process_time() - started
    assert r.status_code == 200, r.text
    assert r.json()["steps"] == plain["steps"] and r.json()["reward"] == plain["reward"]
    assert spent < 2.0, f"{spent:.2f} s of CPU for one padded request"  # cutting one pad at a time: ~10 s


def test_an_over_context_completion_is_fitted_without_tokenizing_megabytes(watched):
    server, engine, scorer = watched
    steps = ["1+1 = 2", "2+1 = 3"] + [f"{k}+" + "1" * 900 + f" = {k + 1}" for k in range(1000)]
    completion = "\n".join(steps)  # ~900 kB, under the 1 MiB body limit; only the first steps fit 160 tokens
    scorer.encoded_chars, scorer.largest_batched = 0, 0
    failed = engine.batcher.stats.failed_items
    r = httpx.post(f"{server.url}/steps", json={"prompt": "q", "completion": completion}, timeout=120)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["scored"] and body["error"] is None and body["n_steps"] == len(steps)
    assert 0 < len(steps) - body["extras"]["unread_steps"] < len(steps)  # a prefix scored, the rest unread
    assert scorer.encoded_chars < 50_000, f"{scorer.encoded_chars} characters tokenized to fit {len(completion)}"
    assert scorer.largest_batched < 50_000  # a batch only ever sees what fits
    assert engine.batcher.stats.failed_items == failed  # no batch failed on it


def test_health_and_other_requests_are_answered_while_a_heavy_request_is_tokenized(watched):
    server, _, scorer = watched
    scorer.entered.clear()
    scorer.gate.clear()
    scorer.hold = "heavy"
    heavy_reply: list[httpx.Response] = []
    completion = "\n".join(f"{k}+1 = {k + 1}" for k in range(300))  # over the context: fitted in its thread
    with httpx.Client(base_url=server.url, timeout=120) as heavy_client, \
            httpx.Client(base_url=server.url, timeout=GUARD_S) as client:
        heavy = threading.Thread(target=lambda: heavy_reply.append(heavy_client.post(
            "/steps", json={"prompt": "heavy", "completion": completion})))
        heavy.start()
        try:
            assert scorer.entered.wait(60)  # the heavy request now blocks inside its tokenizing
            assert client.get("/health").status_code == 200
            honest = client.post("/score", json={"prompt": "q", "completion": GOOD})  # a forward pass of its own
            assert honest.status_code == 200 and honest.json()["error"] is None
            assert not heavy_reply  # all of the above happened while the heavy request was still held
        finally:
            scorer.hold = None
            scorer.gate.set()
            heavy.join(120)
    assert heavy_reply and heavy_reply[0].status_code == 200


def test_a_client_sending_costly_requests_waits_for_them_while_an_honest_one_is_served(watched):
    """Closed loops, as RL clients run: the paced client gets fewer answers than the honest one in the same time.
    Unpaced, its requests (no forward pass, ~7 ms of CPU) come back faster than a batched honest one."""
    server, _, _ = watched
    costly = json.dumps({"prompt": "q", "completion": "1+1 = 2\n" * 100_000}).encode()  # over --max-steps
    answered, stop = {"costly": 0, "honest": 0}, threading.Event()

    def costly_client() -> None:
        with httpx.Client(base_url=server.url, timeout=120) as client:
            while not stop.is_set():
                r = client.post("/score", content=costly, headers=JSON)
                assert r.status_code == 200 and "limit of 1024" in r.json()["error"]
                answered["costly"] += 1

    attacker = threading.Thread(target=costly_client)
    attacker.start()
    try:
        with httpx.Client(base_url=server.url, timeout=120) as client:
            for _ in range(20):
                assert client.post("/score", json={"prompt": "q", "completion": GOOD}).status_code == 200
                answered["honest"] += 1
    finally:
        stop.set()
        attacker.join(120)
    assert answered["costly"] < answered["honest"], answered


def test_bodies_past_the_in_flight_budget_wait_unread_while_smaller_ones_are_served(tiny_prm):
    server, _, scorer = _serve_watched(tiny_prm, max_body_bytes=1 << 20, max_inflight_body_bytes=1 << 20)
    held = "\n".join(f"{k}+1 = {k + 1}" for k in range(300)) + "<pad>" * 100_000  # ~0.5 MB, over the context
    replies: dict[str, httpx.Response] = {}

    def post(name: str, body: dict) -> None:
        with httpx.Client(base_url=server.url, timeout=120) as client:
            replies[name] = client.post("/steps", json=body)

    scorer.hold = "heavy"
    first = threading.Thread(target=post, args=("first", {"prompt": "heavy", "completion": held}))
    second = threading.Thread(target=post, args=("second", {"prompt": "q", "completion": GOOD + "<pad>" * 120_000}))
    try:
        with httpx.Client(base_url=server.url, timeout=GUARD_S) as client:
            first.start()
            assert scorer.entered.wait(60)  # the first body is in service, held in its tokenizing
            second.start()  # 0.5 + 0.6 MB > 1 MiB: the second body must wait unread
            _until(lambda: client.get("/health").json()["bodies"]["waiting"] == 1, "the second body waits")
            small = client.post("/steps", json={"prompt": "q", "completion": GOOD})  # 0.5 MB + 100 B fits
            assert small.status_code == 200 and small.json()["scored"]
            assert client.get("/health").json()["bodies"]["waiting"] == 1 and not replies
    finally:
        scorer.gate.set()
        first.join(120)
        second.join(120)
        server.stop()
    assert replies["first"].status_code == replies["second"].status_code == 200


PROBES = [  # (name, path, body): none may get a 5xx
    ("over-body-limit", "/score", json.dumps({"prompt": "q", "completion": "x" * (1 << 20)}).encode()),
    ("padding", "/get_reward", json.dumps({"query": ["q" + GOOD + "<pad>" * 200_000], "prompts": ["q"]}).encode()),
    ("many-steps", "/steps", json.dumps({"prompt": "q", "completion": "1+1 = 2\n" * 100_000}).encode()),
    ("one-huge-step", "/steps", json.dumps({"prompt": "q", "completion": "1" * 900_000}).encode()),
    ("huge-prompt", "/score", json.dumps({"prompt": "q" * 900_000, "completion": GOOD}).encode()),
    ("surrogates", "/get_reward", json.dumps({"query": ["\ud800" + GOOD], "prompts": ["\udfff"],
                                              "labels": ["\ud800"]}).encode()),
    ("surrogate-step", "/steps", json.dumps({"prompt": "q", "completion": "1+1 = 2\ud800"}).encode()),
    ("nested-json", "/score", b"[" * 200_000 + b"]" * 200_000),
    ("not-utf8", "/score", b'{"prompt": "\xff\xfe", "completion": "a"}'),
    ("huge-integer", "/score", b'{"prompt": "q", "completion": "a", "ground_truth": ' + b"9" * 5000 + b"}"),
    ("nan-label", "/get_reward", b'{"query": ["q"], "labels": [NaN]}'),
    ("empty", "/steps", b""),
]


@pytest.mark.parametrize("path,body", [(p, b) for _, p, b in PROBES], ids=[name for name, *_ in PROBES])
def test_no_probe_gets_a_5xx(watched, path, body):
    server, _, _ = watched
    with httpx.Client(base_url=server.url, timeout=120) as client:
        r = client.post(path, content=body, headers=JSON)
        assert r.status_code < 500, r.text[:300]
        assert client.post("/score", json={"prompt": "q", "completion": GOOD}).status_code == 200
