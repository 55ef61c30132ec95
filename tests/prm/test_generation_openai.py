"""OpenAIHTTPBackend: per-row failure on a closed port and on a server that misbehaves on purpose, and the
real vLLM server on a tiny policy."""

from __future__ import annotations

import http.server
import json
import re
import threading
import time
from collections import Counter
from collections.abc import Iterator
from typing import ClassVar

import pytest

from prm.generation import GenerationConfig, GenerationRequest, make_backend, sample_solutions
from prm.generation.server import free_port


def test_closed_port_gives_clear_per_row_failures() -> None:
    config = GenerationConfig(
        backend="openai", base_url=f"http://127.0.0.1:{free_port()}/v1", max_retries=1, backoff_s=0.01
    )
    with make_backend(config) as backend:
        rows = backend.generate([GenerationRequest("1+1="), GenerationRequest("2+2=", n=2)])
    assert [r.status for r in rows] == ["error", "error"]
    # A count, not a time: the refused connection is retried max_retries times, then reported (ConnectError).
    assert all("cannot reach the completions server" in r.error and "after 2 attempts (ConnectError" in r.error
               and "api_server" in r.error for r in rows)


TRICKLE_BYTES = 300  # the trickling body: 1 + 299 bytes, one every 0.2 s (a minute without a client deadline)


class _Misbehaving(http.server.BaseHTTPRequestHandler):
    """An OpenAI-compatible server whose answer to a completion depends on the prompt: ``good``, or one fault.

    Paths starting with ``/broken/`` serve an HTML page for ``GET /models``. ``attempts`` counts requests per
    prompt, so a test can see the retries.
    """

    attempts: ClassVar[Counter[str]] = Counter()
    payloads: ClassVar[list[dict]] = []  # every completion request as received
    lock = threading.Lock()

    def log_message(self, *args: object) -> None:  # keep pytest output clean
        pass

    def _send(self, body: bytes, content_type: str = "application/json", length: int | None = None) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body) if length is None else length))
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def do_GET(self) -> None:
        if self.path.startswith("/broken/"):
            self._send(b"<html><body>Welcome to nginx!</body></html>", "text/html")
        else:
            self._send(json.dumps({"data": [{"id": "fake", "max_model_len": 512}]}).encode())

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        prompt, n = request["prompt"], request["n"]
        with self.lock:
            self.payloads.append(request)
            self.attempts[prompt] += 1
            attempt = self.attempts[prompt]
        choices = [{"index": i, "text": f" {i}", "finish_reason": "stop"} for i in range(n)]
        usage = {"prompt_tokens": 3, "completion_tokens": 2 * n}
        if prompt == "trickle":  # headers, then one byte every 0.2 s of a body that never completes
            self._send(b"{", length=100_000)
            try:
                for _ in range(TRICKLE_BYTES - 1):
                    time.sleep(0.2)
                    self.wfile.write(b" ")
                    self.wfile.flush()
            except OSError:  # the client hung up: what a deadline should make it do
                pass
            return
        bodies = {
            "bad json": b'{"choices": [{"text": "4", "ind',
            "html": b"<html><body>502 Bad Gateway</body></html>",
            "wrong types": json.dumps({"choices": [{"index": 0, "text": 4}, *choices[1:]], "usage": usage}).encode(),
            "bad usage": json.dumps({"choices": choices, "usage": {"prompt_tokens": "many"}}).encode(),
            "fewer": json.dumps({"choices": choices[: n // 2], "usage": usage}).encode(),
            "flaky": b"<html>busy</html>" if attempt == 1 else None,  # bad once, then good
        }
        body = bodies.get(prompt) or json.dumps({"choices": choices, "usage": usage}).encode()
        self._send(body, "text/html" if body.startswith(b"<html>") else "application/json")


@pytest.fixture
def misbehaving() -> Iterator[str]:
    """The root URL of a :class:`_Misbehaving` server on 127.0.0.1, for the duration of a test."""
    _Misbehaving.attempts = Counter()
    _Misbehaving.payloads = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Misbehaving)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_misbehaving_server_fails_only_its_rows_after_bounded_retries(misbehaving: str) -> None:
    config = GenerationConfig(backend="openai", base_url=f"{misbehaving}/v1", max_retries=1, backoff_s=0.01,
                              request_timeout_s=1.5, max_concurrency=8)
    expected = {  # prompt -> text of its row's error (None: the row is ok)
        "good": None,
        "flaky": None,
        "bad json": "the body is not JSON (application/json)",
        "html": "the body is not JSON (text/html)",
        "wrong types": "choice text is '4', expected a string",
        "bad usage": "usage.prompt_tokens is",
        "fewer": "4 choices for n=8",
        "trickle": "no complete response within request_timeout_s=1.5 s",
    }
    with make_backend(config) as backend:
        rows = backend.generate([GenerationRequest(prompt, n=8) for prompt in expected])
    for row, (prompt, error) in zip(rows, expected.items(), strict=True):
        if error is None:
            assert row.ok and row.texts == tuple(f" {i}" for i in range(8)), (prompt, row.error)
        else:
            assert row.status == "error" and error in row.error and "2 attempts" in row.error, (prompt, row.error)
    assert {p: _Misbehaving.attempts[p] for p in expected} == {"good": 1, **{p: 2 for p in list(expected)[1:]}}
    # Bytes, not seconds: the deadline cut the trickle short (~8 bytes in 1.5 s; a loaded machine only lowers it),
    # where a client without one would read all of it.
    arrived = int(re.search(r"\((\d+) bytes of the body arrived\)", rows[-1].error).group(1))
    assert 0 < arrived < TRICKLE_BYTES


def test_an_unusable_model_list_fails_every_row_instead_of_raising(misbehaving: str) -> None:
    config = GenerationConfig(backend="openai", base_url=f"{misbehaving}/broken/v1", max_retries=1, backoff_s=0.01)
    with make_backend(config) as backend:
        rows = backend.generate([GenerationRequest("good"), GenerationRequest("good", n=2)])
    assert [r.status for r in rows] == ["error", "error"]
    assert all("sent no usable response in 2 attempts" in r.error and "text/html" in r.error for r in rows)
    assert _Misbehaving.attempts["good"] == 0


@pytest.fixture(scope="module")
def served(tiny_openai_server) -> GenerationConfig:
    """A client of the session's server on the tiny policy (tests/prm/conftest.py)."""
    return GenerationConfig(backend="openai", base_url=tiny_openai_server.base_url, max_concurrency=4)


@pytest.mark.slow
def test_http_backend_returns_the_same_kind_of_rows(served: GenerationConfig, vllm_backend, tiny_context: int) -> None:
    requests = [
        GenerationRequest("12+7-3*2 =", n=3, max_tokens=12, seed=11),
        GenerationRequest(""),
        GenerationRequest("9" * (tiny_context + 10), max_tokens=4),
    ]
    with make_backend(served) as backend:
        assert backend.info.max_model_len == tiny_context
        rows = backend.generate(requests)
        again = backend.generate(requests[:1])
    offline = vllm_backend.generate(requests)
    assert [r.status for r in rows] == [r.status for r in offline] == ["ok", "error", "error"]
    assert rows[0].prompt_tokens == offline[0].prompt_tokens
    assert len(rows[0].texts) == 3 and all(1 <= c <= 12 for c in rows[0].completion_tokens)
    assert again[0].texts == rows[0].texts  # per-request seed is honoured by the server
    assert "empty prompt" in rows[1].error
    assert "server rejected the request (400)" in rows[2].error


@pytest.mark.slow
def test_sample_solutions_over_http(served: GenerationConfig) -> None:
    with make_backend(served) as backend:
        rows = sample_solutions(backend, ["3-7 =", "4*5 ="], n=2, max_tokens=6, seed=0)
    assert all(r.ok and r.total_completion_tokens >= 2 for r in rows)


def test_prompt_template_top_p_and_stop_reach_the_server(misbehaving: str) -> None:
    """The question used to go in bare, with no top_p and no stop sequences: the solutions' sampling path now sends
    the recipe's instruction, top_p and stop strings, and the rows' prompt version names the template."""
    from prm.datagen import sample_solution_rows
    from prm.format import Prompter, PromptTemplate

    class Plain:
        chat_template = None

    template = PromptTemplate(system_prompt="Be brief.", instruction="End with: The answer is: <number>")
    config = GenerationConfig(backend="openai", base_url=f"{misbehaving}/v1", max_retries=0)
    problems = [{"problem_id": "p", "question": "What is 2+3?", "gold_answer": "5"}]
    with make_backend(config) as backend:
        sols, _, _ = sample_solution_rows(backend, problems, Prompter(Plain(), template), model="fake", n=2, seed=0,
                                          max_tokens=16, temperature=0.7, top_p=0.9, stop=("\n\n\n", "####"))
    (sent,) = _Misbehaving.payloads
    assert sent["prompt"] == "Be brief.\n\nWhat is 2+3?\n\nEnd with: The answer is: <number>\n"
    assert (sent["top_p"], sent["stop"], sent["temperature"]) == (0.9, ["\n\n\n", "####"], 0.7)
    assert {s["prompt_version"] for s in sols} == {f"p1-plain-t{template.digest()}"}
