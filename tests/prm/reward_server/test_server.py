"""The reward server over real HTTP: uvicorn on a free 127.0.0.1 port in a thread, a tiny trained PRM.

Happy paths of every endpoint (OpenRLHF's /get_reward as OpenRLHF calls it, /score, /steps, /health,
/ready); malformed input (bad JSON, missing fields, wrong types, huge and chunked bodies, too many samples)
gets a 4xx with a message; empty, padded, over-long and 10,000-step completions and scoring errors get a
defined reward; after each the server still serves; concurrent requests share forward passes.
"""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
import threading
from pathlib import Path

import httpx
import pytest

from prm.format import segment
from prm.reward_server.app import RewardEngine, ServerConfig, ServerThread, create_app
from prm.reward_server.batching import BatchingConfig
from prm.reward_server.constants import DEFAULT_MAX_SAMPLES
from prm.reward_server.http_limits import HttpLimits
from prm.rewards.config import RewardConfig
from prm.rewards.shaping import reward_for
from prm.scoring import ScorerConfig, load_prm
from tests.prm.reward_server.cli_process import served_cli
from tests.tiny_models import TinyModels

PROJECT_ROOT = Path(__file__).resolve().parents[3]
CONTEXT = 512  # positions of the tiny PRM: ~60 arithmetic steps fit, 100 do not
W = 0.5  # outcome weight of the shared server
GOOD = "3+4 = 7\n7+2 = 9\nAnswer: 9"
PROBLEM = "Tom has 3 apples, gets 4 more, then 2 more. How many?"


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the test machine is shared; a tiny model gains nothing from more
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def tiny_prm(tiny_models: TinyModels) -> Path:
    """The tiny PRM (tests/tiny_models.py) with this module's longer context, in place of the rewards conftest's."""
    return tiny_models.prm(CONTEXT)


def _serve(engine: RewardEngine) -> ServerThread:
    server = ServerThread(create_app(engine, model_name="tiny")).start()
    engine.batcher.wait_ready(120)
    return server


@pytest.fixture(scope="module")
def served(tiny_prm: Path):
    engine = RewardEngine(lambda: load_prm(tiny_prm), ServerConfig(reward=RewardConfig(outcome_weight=W)))
    server = _serve(engine)
    with httpx.Client(base_url=server.url, timeout=60) as client:
        yield client, engine
    server.stop()


def _still_serves(client: httpx.Client) -> None:
    r = client.post("/score", json={"prompt": PROBLEM, "completion": GOOD, "ground_truth": "9"})
    assert r.status_code == 200 and r.json()["error"] is None


def _steps(client: httpx.Client, completion: str, gold: str = "9") -> dict:
    r = client.post("/steps", json={"prompt": PROBLEM, "completion": completion, "ground_truth": gold})
    assert r.status_code == 200, r.text
    return r.json()


# ---- happy paths -------------------------------------------------------------------------------------------
def test_health_and_ready(served):
    client, _ = served
    assert client.get("/ready").json() == {"ready": True, "model": "tiny"}
    health = client.get("/health").json()
    assert health["status"] == "ok" and health["ready"] is True and "largest_batch" in health["batching"]


def test_get_reward_answers_one_sample_as_openrlhf_sends_it(served):
    client, _ = served
    prompt = f"<|im_start|>user\n{PROBLEM}<|im_end|>\n<|im_start|>assistant\n"
    # OpenRLHF decodes prompt + response ids with skip_special_tokens=False: BOS in front, EOS behind.
    query = "<s>" + prompt + GOOD + "<|im_end|>"
    r = client.post("/get_reward", json={"query": [query], "prompts": [prompt], "labels": ["9"]})
    assert r.status_code == 200, r.text
    body = r.json()
    assert set(body) == {"rewards", "scores", "extra_logs"}
    assert len(body["rewards"]) == len(body["scores"]) == 1
    assert all(len(v) == 1 and isinstance(v[0], float) for v in body["extra_logs"].values())
    # The same completion through /steps (the chat-templated prompt is what the PRM read there too).
    steps = client.post("/steps", json={"prompt": prompt, "completion": GOOD, "ground_truth": "9"}).json()
    scores = [s["score"] for s in steps["steps"]]
    assert len(scores) == 2
    assert body["rewards"][0] == pytest.approx((1 - W) * min(scores) + W * 1.0)
    assert body["scores"] == [1.0]  # the graded outcome feeds OpenRLHF's dynamic filtering
    logs = body["extra_logs"]
    assert (logs["outcome_reward"], logs["n_steps"], logs["reward_error"]) == ([1.0], [2.0], [0.0])


def test_get_reward_keeps_the_order_of_several_samples(served):
    client, _ = served
    completions = [GOOD, "3+4 = 8\nAnswer: 8", "Answer: 9", ""]
    body = client.post("/get_reward", json={"query": [PROBLEM + c for c in completions],
                                            "prompts": [PROBLEM] * 4, "labels": ["9", "9", 9, "9"]}).json()
    one_by_one = [_steps(client, c)["reward"] for c in completions]
    assert body["rewards"] == pytest.approx(one_by_one, abs=1e-6)
    assert body["extra_logs"]["outcome_reward"] == [1.0, 0.0, 1.0, 0.0]  # a numeric label is graded as text


def test_get_reward_without_a_label_scores_the_outcome_wrong_and_warns(served, caplog):
    client, _ = served  # the file-style reward_func does the same (prm.rewards.adapters.openrlhf)
    with caplog.at_level(logging.WARNING):
        body = client.post("/get_reward", json={"query": [PROBLEM + GOOD], "prompts": [PROBLEM],
                                                "labels": [""]}).json()
    assert body["extra_logs"]["outcome_reward"] == [0.0] and body["extra_logs"]["reward_error"] == [0.0]
    assert body["rewards"] == [pytest.approx((1 - W) * body["extra_logs"]["process_reward"][0])]
    assert "have no label: their outcome reward is 0" in caplog.text


def test_steps_spans_index_the_completion_as_sent(served):
    client, _ = served
    completion = "<pad>  3+4 = 7\r\n7+2 = 9  \nAnswer: 9</s><pad>"
    body = _steps(client, completion)
    spans = [(s["start"], s["end"]) for s in body["steps"]]
    assert [completion[a:b] for a, b in spans] == ["3+4 = 7", "7+2 = 9"]
    assert all(0.0 <= s["score"] <= 1.0 for s in body["steps"])
    assert body["n_steps"] == 2 and body["error"] is None


def test_score_is_one_number_with_numeric_extras_for_verl(served):
    client, _ = served
    body = client.post("/score", json={"prompt": PROBLEM, "completion": GOOD, "ground_truth": "9",
                                       "data_source": "arith"}).json()  # unknown fields are ignored
    assert isinstance(body["score"], float) and body["error"] is None
    assert all(isinstance(v, float) for v in body["extras"].values())
    assert body["extras"]["outcome_reward"] == 1.0


# ---- malformed input: a 4xx with a message, and the server keeps serving ------------------------------------
JSON = {"Content-Type": "application/json"}
BODY = HttpLimits.max_body_bytes
MALFORMED = [
    ("/score", {"content": b'{"prompt": "q", ', "headers": JSON}, 400, "not valid JSON"),
    ("/score", {"content": b"prompt=q&completion=a"}, 400, "not JSON"),
    ("/score", {"json": ["q", "a"]}, 422, "valid dictionary"),
    ("/score", {"json": {"prompt": "q"}}, 422, r"completion: Field required \(missing\)"),
    ("/score", {"json": {"prompt": 3, "completion": "a", "ground_truth": "9"}}, 422, r"prompt: .*string \(got int\)"),
    ("/steps", {"json": {"prompt": "q", "completion": ["a"], "ground_truth": "9"}}, 422, r"completion: .*\(got list\)"),
    ("/steps", {"json": {"prompt": "q", "completion": "a"}}, 422, "ground_truth is missing.*--outcome-weight 0"),
    ("/get_reward", {"json": {"prompts": ["q"]}}, 422, r"query: Field required"),
    ("/get_reward", {"json": {"query": "q+a", "labels": ["9"]}}, 422, r"query: .*valid list"),
    ("/get_reward", {"json": {"query": ["a", "b"], "prompts": ["q"], "labels": ["9", "9"]}}, 422,
     "prompts has 1 entries for 2 queries"),
    ("/get_reward", {"json": {"query": ["a"] * (DEFAULT_MAX_SAMPLES + 1), "labels": ["9"] * (DEFAULT_MAX_SAMPLES + 1)}},
     413, f"limit of {DEFAULT_MAX_SAMPLES}"),
    ("/get_reward", {"content": b'{"query": ["' + b"x" * (2 * BODY) + b'"]}', "headers": JSON}, 413,
     f"over this server's limit of {BODY} bytes"),
    ("/get_reward", {"content": iter([b'{"query": ["', b"x" * BODY, b'"]}']), "headers": JSON}, 413,
     f"limit of {BODY} bytes"),  # chunked: no Content-Length, counted as it arrives
]


@pytest.mark.parametrize("path,kwargs,status,match", MALFORMED,
                         ids=[f"{p}-{i}" for i, (p, *_) in enumerate(MALFORMED)])
def test_malformed_requests_get_a_4xx_with_a_message(served, path, kwargs, status, match):
    client, _ = served
    r = client.post(path, **kwargs)
    assert r.status_code == status, r.text
    assert re.search(match, r.json()["detail"]), r.json()["detail"]
    _still_serves(client)


# ---- odd completions: a defined reward --------------------------------------------------------------------
@pytest.mark.parametrize("completion", ["", "   \n\n ", "<pad><pad></s>"])
def test_empty_or_padding_only_completion_gets_the_no_step_reward(served, completion):
    client, engine = served
    body = _steps(client, completion)
    assert body["steps"] == [] and body["n_steps"] == 0 and body["error"] is None
    assert body["reward"] == reward_for(engine.config.reward, [], 0.0).reward


def test_ten_thousand_steps_get_a_defined_reward_and_a_logged_error(served, caplog):
    client, engine = served
    completion = "\n".join(f"{i}+1 = {i + 1}" for i in range(10_000)) + "\nAnswer: 10000"
    n_steps = len(segment(completion))  # segment makes the lines past its piece limit one last step
    assert n_steps > engine.config.max_steps
    with caplog.at_level(logging.WARNING, logger="prm.reward_server.app"):
        r = client.post("/get_reward", json={"query": [PROBLEM + completion], "prompts": [PROBLEM],
                                             "labels": ["10000"]})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["rewards"] == [reward_for(engine.config.reward, [], 1.0).reward]  # process of no steps, outcome kept
    assert body["extra_logs"]["reward_error"] == [1.0] and body["extra_logs"]["n_steps"] == [0.0]  # none scored
    assert f"{n_steps} steps is over this server's limit of 1024" in caplog.text
    _still_serves(client)


UNSCORED = [  # (completion, gold, why): /score gives these the no-step reward with an error
    ("\n".join(f"{i}+1 = {i + 1}" for i in range(2000)) + "\nAnswer: 2000", "2000", "over this server's limit of 1024"),
    ("3+4 = 7\ud800\n7+2 = 9\nAnswer: 9", "9", r"scoring failed \(TypeError"),  # a lone surrogate: no tokenizer input
]


@pytest.mark.parametrize("completion,gold,why", UNSCORED, ids=["over-max-steps", "lone-surrogate"])
def test_steps_answers_an_unscored_completion_as_score_does(served, completion, gold, why):
    client, _ = served
    body = json.dumps({"prompt": PROBLEM, "completion": completion, "ground_truth": gold})  # ASCII: \ud800 escaped
    score, steps = (client.post(path, content=body, headers=JSON) for path in ("/score", "/steps"))
    assert (score.status_code, steps.status_code) == (200, 200), steps.text
    s, st = score.json(), steps.json()
    assert st["scored"] is False and st["steps"] == [] and st["n_steps"] > 0
    assert re.search(why, st["error"]) and st["error"] == s["error"]
    assert st["reward"] == s["score"] and st["extras"] == s["extras"] and st["extras"]["reward_error"] == 1.0
    assert _steps(client, GOOD)["scored"] is True
    _still_serves(client)


def test_completion_over_the_prm_context_is_scored_up_to_what_fits(served):
    client, _ = served
    body = _steps(client, "\n".join(f"{i}+1 = {i + 1}" for i in range(100)))
    assert body["n_steps"] == 100 and body["error"] is None
    assert 0 < body["extras"]["unread_steps"] < 100  # the steps past the context count as bad steps
    assert len(body["steps"]) == 100


# ---- scoring errors, load errors, a busy model ----------------------------------------------------------------
class _Flaky:
    """A real scorer that raises on any batch holding the problem "boom" (a stand-in for a CUDA error)."""

    def __init__(self, scorer, gate: threading.Event | None = None):
        self.scorer, self.gate = scorer, gate
        self.entered = threading.Event()  # set when a batch starts scoring

    def encode(self, problem, steps):
        return self.scorer.encode(problem, steps)

    def score_batch(self, items, batch_size=None):
        self.entered.set()
        if self.gate is not None:
            assert self.gate.wait(120), "the test never opened the gate"
        if any(p == "boom" for p, _ in items):
            raise RuntimeError("CUDA error: device-side assert triggered")
        return self.scorer.score_batch(items, batch_size=batch_size)


def test_a_scoring_error_becomes_the_no_step_reward_and_spares_the_batch(tiny_prm, caplog):
    config = ServerConfig(reward=RewardConfig(outcome_weight=0), batching=BatchingConfig(max_wait_ms=300))
    engine = RewardEngine(lambda: _Flaky(load_prm(tiny_prm)), config)
    server = _serve(engine)
    try:
        with caplog.at_level(logging.ERROR, logger="prm.reward_server.app"), httpx.Client(base_url=server.url) as c:
            r = c.post("/get_reward", json={"query": ["q" + GOOD, "boom" + GOOD], "prompts": ["q", "boom"]})
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["extra_logs"]["reward_error"] == [0.0, 1.0]
        assert body["rewards"][1] == reward_for(config.reward, [], None).reward
        assert body["extra_logs"]["n_steps"] == [2.0, 0.0] and body["rewards"][0] > 0
        assert "failed; it gets the no-step reward" in caplog.text and "device-side assert" in caplog.text
    finally:
        server.stop()


def test_a_model_that_fails_to_load_answers_503_with_the_reason(tmp_path):
    engine = RewardEngine(lambda: load_prm(tmp_path / "missing"), ServerConfig(reward=RewardConfig(outcome_weight=0)))
    server = _serve(engine)
    try:
        with httpx.Client(base_url=server.url) as c:
            assert c.get("/health").status_code == 200
            ready = c.get("/ready")
            assert ready.status_code == 503 and "failed to load" in ready.json()["detail"]
            r = c.post("/score", json={"prompt": "q", "completion": GOOD})
            assert r.status_code == 503 and "restart it with a loadable --model" in r.json()["detail"]
    finally:
        server.stop()


def test_health_answers_while_the_model_is_busy(tiny_prm):
    gate, made = threading.Event(), []

    def scorer():
        made.append(_Flaky(load_prm(tiny_prm), gate=gate))
        return made[0]

    server = _serve(RewardEngine(scorer, ServerConfig(reward=RewardConfig(outcome_weight=0))))  # built once ready
    try:
        with httpx.Client(base_url=server.url, timeout=30) as c:
            request = {"json": {"prompt": "q", "completion": GOOD}}
            slow = threading.Thread(target=c.post, args=("/score",), kwargs=request)
            slow.start()
            assert made[0].entered.wait(60)  # the batch now blocks in the worker thread until the gate opens
            # A blocked event loop could not answer until the gate opened, which only happens after this line.
            assert c.get("/health", timeout=60).status_code == 200
            gate.set()
            slow.join()
    finally:
        gate.set()
        server.stop()


# ---- batching batches ---------------------------------------------------------------------------------------
def test_concurrent_requests_share_forward_passes_and_match_serial_scores(tiny_prm):
    forwards = []

    def counted():
        scorer = load_prm(tiny_prm, ScorerConfig(batch_size=64))  # one forward pass may take the whole batch
        scorer.model.register_forward_hook(lambda module, args, kwargs, out: forwards.append(
            kwargs["input_ids"].shape[0]), with_kwargs=True)
        return scorer

    n = 32
    # A wait far past the test's length: the batch closes when the n-th request makes it full, never on the
    # clock, so however slowly the requests arrive, sharing forward passes is the only way to answer them.
    config = ServerConfig(reward=RewardConfig(outcome_weight=0),
                          batching=BatchingConfig(max_batch=n, max_wait_ms=3_600_000))
    engine = RewardEngine(counted, config)
    server = _serve(engine)
    completions = ["\n".join(f"{k}+{j} = {k + j}" for j in range(1 + k % 5)) for k in range(n)]
    results: list[float | None] = [None] * n
    barrier = threading.Barrier(n)

    def client(i: int) -> None:
        with httpx.Client(base_url=server.url, timeout=60) as c:
            barrier.wait()
            r = c.post("/steps", json={"prompt": f"problem {i}", "completion": completions[i]})
            results[i] = r.json()["reward"] if r.status_code == 200 else None

    try:
        threads = [threading.Thread(target=client, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        concurrent_forwards = len(forwards)
        batches = list(engine.batcher.stats.sizes)
    finally:
        server.stop()
    lone = RewardEngine(counted, ServerConfig(reward=RewardConfig(outcome_weight=0)))  # the default short wait
    server = _serve(lone)
    try:
        with httpx.Client(base_url=server.url, timeout=60) as c:  # one at a time: nothing to share a batch with
            for i in range(3):
                r = c.post("/steps", json={"prompt": f"problem {i}", "completion": completions[i]})
                assert r.status_code == 200
    finally:
        server.stop()
    assert None not in results
    assert batches == [n], batches  # every concurrent request in one batch
    assert concurrent_forwards <= 4, f"{n} concurrent requests took {concurrent_forwards} forward passes"
    assert sum(forwards[:concurrent_forwards]) == n and max(forwards) >= n // 4
    assert forwards[concurrent_forwards:] == [1, 1, 1]  # one forward pass per lone request
    scorer = load_prm(tiny_prm)  # each completion alone, no padding: batching must change no score
    alone = [min(scorer.score_steps(f"problem {i}", segment(c).steps)) for i, c in enumerate(completions)]
    assert results == pytest.approx(alone, abs=1e-5)


# ---- the CLI ------------------------------------------------------------------------------------------------
def _cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(PROJECT_ROOT)}
    return subprocess.run([sys.executable, "-m", "prm.reward_server.cli", *args], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=PROJECT_ROOT)


def test_every_cli_command_is_documented_with_an_example():
    from click.testing import CliRunner

    from prm.reward_server.cli import main

    runner = CliRunner()
    assert "Example:" in runner.invoke(main, ["--help"]).output
    for name in main.commands:
        assert "Example:" in runner.invoke(main, [name, "--help"]).output, name


@pytest.mark.parametrize("args,match", [
    (["--model", "/nowhere"], r"^Error: no PRM folder at /nowhere \(no config.json\) - pass --model DIR"),
    (["--max-batch", "0"], r"^Error: max_batch=0 must be >= 1.* - fix the option"),
    (["--outcome-weight", "2"], r"^Error: outcome_weight=2.0 must be in \[0, 1\].* - fix the option"),
])
def test_cli_errors_are_one_line_and_exit_1(tmp_path, args, match):
    from click.testing import CliRunner

    from prm.reward_server.cli import main

    (tmp_path / "config.json").write_text("{}")
    full = ["serve", "--model", str(tmp_path), *args] if args[0] != "--model" else ["serve", *args]
    result = CliRunner().invoke(main, full)
    assert result.exit_code == 1
    assert re.match(match, result.output.strip()) and len(result.output.strip().splitlines()) == 1, result.output


def test_cli_serve_answers_openrlhf_over_http(tiny_prm):
    with served_cli("--model", str(tiny_prm), "--shaping", "min", "--outcome-weight", "0", "--threads", "1",
                    "--log-level", "warning") as url:
        r = httpx.post(f"{url}/get_reward", json={"query": ["q" + GOOD], "prompts": ["q"], "labels": [""]})
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["rewards"] == body["extra_logs"]["min_step_score"] and body["extra_logs"]["reward_error"] == [0.0]
        assert json.loads(r.text)["scores"] == body["rewards"]  # no gold: the PRM reward is the score
