"""The fleet of OpenAI-compatible servers: selection, per-server bounds and health on scripted inputs, the
config that names the servers, and two real vLLM servers of which one is killed in the middle of a batch."""

from __future__ import annotations

import os
import random
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from prm.generation import GenerationConfig, GenerationRequest, make_backend, start_openai_server
from prm.generation.fleet import Fleet
from prm.generation.server import free_port

A, B, C = "http://a:8000/v1", "http://b:8000/v1", "http://c:8000/v1"


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Probe:
    """A scripted health probe: ``answers[url]`` is what the next probes of ``url`` return; records the calls."""

    def __init__(self, **answers: bool) -> None:
        self.answers = answers
        self.calls: list[str] = []

    def __call__(self, url: str) -> bool:
        self.calls.append(url)
        answer = self.answers.get(url[7], False)  # "http://a..." -> "a"
        if isinstance(answer, Exception):
            raise answer
        return answer


def test_requests_go_to_the_least_loaded_server_up_to_its_bound() -> None:
    fleet = Fleet([A, B, C], max_in_flight=2, probe=Probe())
    taken = [fleet.acquire() for _ in range(6)]
    assert taken == [A, B, C, A, B, C]
    fleet.release(B, ok=True)
    assert fleet.acquire() == B  # the only free slot

    spread = Fleet([A, B], max_in_flight=2, probe=Probe())
    spread.release(spread.acquire(), ok=True)  # A answered one
    assert spread.acquire() == B  # both idle: the one that has served fewer


def test_a_full_fleet_makes_the_caller_wait_for_a_slot() -> None:
    fleet = Fleet([A, B], max_in_flight=1, probe=Probe())
    fleet.acquire(), fleet.acquire()
    got: list[str] = []
    waiter = threading.Thread(target=lambda: got.append(fleet.acquire()))
    waiter.start()
    waiter.join(timeout=0.3)
    assert waiter.is_alive() and got == []  # both slots taken: it waits
    fleet.release(B, ok=True)
    waiter.join(timeout=10)
    assert got == [B]


def test_avoid_picks_another_server_when_one_has_a_slot() -> None:
    fleet = Fleet([A, B], max_in_flight=1, probe=Probe())
    assert fleet.acquire(avoid=A) == B
    assert fleet.acquire(avoid=A) == A  # B is full: the avoided server is better than waiting


def test_a_failed_server_sits_out_until_a_probe_finds_it_back() -> None:
    clock, probe = Clock(), Probe(a=False)
    fleet = Fleet([A, B], max_in_flight=4, probe=probe, reprobe_s=10.0, clock=clock)
    fleet.release(fleet.acquire(), ok=False)  # A refused the connection
    assert fleet.up == (B,)
    assert [fleet.acquire() for _ in range(3)] == [B, B, B]  # A takes nothing while down
    assert probe.calls == []  # not due yet
    clock.now = 10.0
    assert fleet.acquire() == B  # A was probed first, failed, and sits out another 10 s
    assert probe.calls == [A] and fleet.servers[A].retry_at == 20.0 and fleet.servers[A].failures == 2
    clock.now = 25.0
    probe.answers["a"] = True
    assert fleet.acquire() == A  # probed, up again, and the least loaded
    assert probe.calls == [A, A] and fleet.up == (A, B)


def test_a_probe_that_raises_leaves_the_server_down_and_probed_again_later() -> None:
    clock, probe = Clock(), Probe(a=RuntimeError("probe bug"))  # type: ignore[arg-type]
    fleet = Fleet([A, B], max_in_flight=1, probe=probe, reprobe_s=5.0, clock=clock)
    fleet.release(fleet.acquire(), ok=False)
    clock.now = 5.0
    with pytest.raises(RuntimeError, match="probe bug"):
        fleet.acquire()
    assert not fleet.servers[A].probing and fleet.servers[A].retry_at == 10.0 and fleet.up == (B,)


def test_with_every_server_down_requests_are_the_probes() -> None:
    """One server behaves as a plain client: after a failure it is still used (the caller's retries and
    backoff decide), and nothing probes it, however much time passes."""
    clock, probe = Clock(), Probe()
    fleet = Fleet([A], max_in_flight=2, probe=probe, clock=clock)
    fleet.release(fleet.acquire(), ok=False)
    clock.now = 1000.0
    assert fleet.acquire() == A and probe.calls == []
    fleet.release(A, ok=True)  # the server answered a request: up again
    assert fleet.up == (A,)

    both = Fleet([A, B], max_in_flight=1, probe=probe, clock=clock)
    both.release(both.acquire(), ok=False)
    both.release(both.acquire(), ok=False)
    assert both.up == () and both.acquire(avoid=A) == B and probe.calls == []


def test_threads_never_exceed_the_per_server_bound_and_every_acquire_is_served() -> None:
    fleet = Fleet([A, B, C], max_in_flight=2, probe=Probe(a=True, b=True, c=True), reprobe_s=0.0)
    peak = dict.fromkeys((A, B, C), 0)
    lock = threading.Lock()
    done = []

    def request(i: int) -> None:
        rng = random.Random(i)
        url = fleet.acquire()
        with lock:
            peak[url] = max(peak[url], fleet.servers[url].in_flight)
        time.sleep(rng.random() * 0.002)
        fleet.release(url, ok=rng.random() > 0.2)  # some connections fail; probes bring the server back
        done.append(i)

    with ThreadPoolExecutor(max_workers=12) as pool:
        list(pool.map(request, range(600)))
    assert sorted(done) == list(range(600))
    assert max(peak.values()) <= 2 and all(s.in_flight == 0 for s in fleet.servers.values())


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"base_urls": "http://a:8000/v1"}, "is one string"),
        ({"base_urls": ("http://a:8000/v1", "b:8000")}, "'b:8000' must start with http://"),
        ({"base_urls": ("http://a:8000/v1", "http://a:8000/v1/")}, "lists a server twice"),
        ({"base_url": "http://c:8000/v1", "base_urls": ("http://a:8000/v1",)}, "is not among base_urls"),
    ],
)
def test_config_rejects_bad_server_lists(kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        GenerationConfig(backend="openai", **kwargs)


def test_base_url_is_folded_into_base_urls() -> None:
    assert GenerationConfig(backend="openai", base_url=A).servers == (A,)
    assert GenerationConfig(backend="openai", base_urls=(A, B)).servers == (A, B)
    assert GenerationConfig(backend="openai", base_url=B, base_urls=(A, B)).servers == (A, B)


def test_the_generation_resource_passes_base_urls() -> None:
    from assets.resources import GenerationResource

    resource = GenerationResource(backend="openai", base_urls=[A, B])
    assert resource.config().servers == (A, B)
    assert GenerationResource(backend="openai", base_url=C).config().servers == (C,)


def test_a_fleet_of_closed_ports_fails_every_row_naming_all_servers() -> None:
    urls = tuple(f"http://127.0.0.1:{free_port()}/v1" for _ in range(2))
    config = GenerationConfig(backend="openai", base_urls=urls, max_retries=1, backoff_s=0.01)
    with make_backend(config) as backend:
        rows = backend.generate([GenerationRequest("1+1="), GenerationRequest("2+2=", n=2)])
        assert backend.fleet.up == ()
    assert [r.status for r in rows] == ["error", "error"]
    assert all(f"cannot reach the completions server at any of {urls[0]}, {urls[1]} after 2 attempts" in r.error
               for r in rows)


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_a_server_killed_mid_batch_loses_no_request(tiny_openai_server, tiny_policy_dir: Path,
                                                   tiny_context: int) -> None:
    # The survivor is the session's server (tests/prm/conftest.py); the doomed one, started here with the same
    # engine settings, is the one killed.
    engine = GenerationConfig(model=str(tiny_policy_dir), max_model_len=tiny_context, kv_cache_gib=0.5, seed=7)
    survivor = tiny_openai_server
    with start_openai_server(engine, free_port(), 300) as doomed:
        # No retries: whatever survives the kill does so by moving to the other server, not by retrying.
        config = GenerationConfig(backend="openai", base_urls=(doomed.base_url, survivor.base_url),
                                  max_concurrency=2, max_retries=0)
        # Prompts of distinct lengths (char tokenizer: 2 tokens per "+1"), so a row shows whose answer it is.
        requests = [GenerationRequest("1" + "+1" * i + " =", n=2, max_tokens=32, seed=i) for i in range(64)]
        with make_backend(config) as backend:
            # A server's first requests are slow (seconds here): warm both (least loaded: two each) first, so
            # the kill below lands while the doomed one is answering.
            assert all(r.ok for r in backend.generate([GenerationRequest("1 =", max_tokens=4)] * 4))
            state = backend.fleet.servers
            before = {url: s.served for url, s in state.items()}
            at_kill: list[tuple[int, int]] = []  # (answered by both in this batch, doomed's in flight) at the kill
            batch_done = threading.Event()

            def kill_mid_batch() -> None:
                # Mid-run: some answers are back and the doomed server holds requests. Its share of the answers
                # is not a condition: under load a slow server may answer none while the other answers many.
                target = state[doomed.base_url]
                while not batch_done.wait(0.005):
                    answered = sum(s.served for s in state.values()) - sum(before.values())
                    if answered >= 4 and target.in_flight > 0:
                        os.killpg(doomed.process.pid, signal.SIGKILL)  # its in-flight requests lose the connection
                        at_kill.append((answered, target.in_flight))
                        return

            killer = threading.Thread(target=kill_mid_batch, daemon=True)
            killer.start()
            rows = backend.generate(requests)
            batch_done.set()
            killer.join()
            answered = {url: s.served - before[url] for url, s in state.items()}
            assert at_kill, f"the batch ended before the doomed server was killed: {answered}, {list(state.values())}"
            assert backend.fleet.up == (survivor.base_url,) and state[doomed.base_url].failures >= 1

    assert [r.index for r in rows] == list(range(len(requests)))
    assert all(r.ok and len(r.texts) == 2 for r in rows), [r.error for r in rows if not r.ok]
    assert [r.prompt_tokens - rows[0].prompt_tokens for r in rows] == [2 * i for i in range(len(requests))]
    # Every answer the client received became exactly one row: none lost, none answered twice.
    assert sum(answered.values()) == len(requests) and at_kill[0][0] < len(requests)
