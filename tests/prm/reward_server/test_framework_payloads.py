"""The reward server under the payloads RL frameworks send with their defaults, over real HTTP and a tiny PRM.

- OpenRLHF up to v0.9.0 (openrlhf/utils/remote_rm_utils.py ``remote_rm_fn_ray``): one POST of the whole rollout
  batch, ``{"query": [...], "prompts": [...], "labels": [...]}`` (1,024 by default), 5 tries 1 s apart on any
  error; from v0.9.1 one sample per request (openrlhf/utils/agent.py ``_fetch_rewards_via_http``).
- ``--apply_chat_template``: prompts rendered through the policy's template; labels as the dataset holds them.
- OpenRLHF never polls ``/ready``: a request while the PRM loads must not get a reward computed without it.
"""

from __future__ import annotations

import threading
from pathlib import Path

import httpx
import pytest

from prm.reward_server.app import RewardEngine, ServerConfig, ServerThread, create_app
from prm.rewards.config import RewardConfig
from prm.scoring import load_prm
from tests.tiny_models import TinyModels

CONTEXT = 512
QUESTION = "Tom has 3 apples, gets 4 more, then 2 more. How many?"
GOOD = "3+4 = 7\n7+2 = 9\nAnswer: 9"
CHATML = "<|im_start|>system\nYou are a helpful AI assistant.<|im_end|>\n<|im_start|>user\n{q}<|im_end|>\n" \
         "<|im_start|>assistant\n"


@pytest.fixture(scope="module")
def tiny_prm(tiny_models: TinyModels) -> Path:
    return tiny_models.prm(CONTEXT)


@pytest.fixture(scope="module")
def client(tiny_prm: Path):
    import torch

    torch.set_num_threads(1)
    engine = RewardEngine(lambda: load_prm(tiny_prm), ServerConfig(reward=RewardConfig(outcome_weight=0.5)))
    server = ServerThread(create_app(engine, model_name="tiny")).start()
    engine.batcher.wait_ready(120)
    with httpx.Client(base_url=server.url, timeout=300) as c:
        yield c
    server.stop()


def test_openrlhf_v090_default_batch_of_1024_is_answered_whole(client):
    n = 1024
    body = {"query": [QUESTION + "\n" + GOOD] * n, "prompts": [QUESTION + "\n"] * n, "labels": ["9"] * n}
    r = client.post("/get_reward", json=body)
    assert r.status_code == 200, r.text  # 413 before: OpenRLHF retried 5 times and stopped training
    out = r.json()
    assert len(out["rewards"]) == n and len(set(out["rewards"])) == 1
    assert out["extra_logs"]["reward_error"] == [0.0] * n


def test_a_chat_templated_query_scores_as_the_plain_one(client):
    plain = client.post("/get_reward", json={"query": [QUESTION + "\n" + GOOD], "prompts": [QUESTION + "\n"],
                                             "labels": ["9"]}).json()
    prompt = CHATML.format(q=QUESTION)
    chat = client.post("/get_reward", json={"query": [prompt + GOOD + "<|im_end|>"], "prompts": [prompt],
                                            "labels": ["9"]}).json()
    assert chat["rewards"] == pytest.approx(plain["rewards"])
    assert chat["extra_logs"]["min_step_score"] == pytest.approx(plain["extra_logs"]["min_step_score"])
    assert chat["extra_logs"]["reward_error"] == [0.0]


def test_a_prompt_not_in_the_query_is_flagged_per_sample_and_counted(client):
    before = client.get("/health").json()["unconditioned"]
    r = client.post("/get_reward", json={"query": [GOOD, QUESTION + "\n" + GOOD],
                                         "prompts": ["a prompt the tokenizer rewrote", QUESTION + "\n"],
                                         "labels": ["9", "9"]})
    assert r.status_code == 200
    assert r.json()["extra_logs"]["reward_error"] == [1.0, 0.0]
    assert client.get("/health").json()["unconditioned"] == before + 1


@pytest.mark.parametrize("label,outcome,error", [
    (["9"], 1.0, 0.0), ({"answer": "9"}, 1.0, 0.0), ({"ground_truth": ["9"]}, 1.0, 0.0),
    (["9", "10"], 0.0, 1.0), ({"note": 1}, 0.0, 1.0),
])
def test_list_and_dict_labels_are_read_and_an_unusable_one_is_a_per_sample_error(client, label, outcome, error):
    r = client.post("/get_reward", json={"query": [QUESTION + "\n" + GOOD], "prompts": [QUESTION + "\n"],
                                         "labels": [label]})
    assert r.status_code == 200, r.text  # 422 before, and OpenRLHF failed the batch
    logs = r.json()["extra_logs"]
    assert (logs["outcome_reward"], logs["reward_error"]) == ([outcome], [error])
    s = client.post("/score", json={"prompt": QUESTION, "completion": GOOD, "ground_truth": label})
    assert s.status_code == 200 and s.json()["extras"]["reward_error"] == error


def test_every_reward_endpoint_answers_503_with_retry_after_while_the_prm_loads(tiny_prm):
    gate = threading.Event()

    def slow_load():
        assert gate.wait(120)
        return load_prm(tiny_prm)

    engine = RewardEngine(slow_load, ServerConfig(reward=RewardConfig(outcome_weight=0.5)))
    server = ServerThread(create_app(engine, model_name="tiny")).start()
    try:
        with httpx.Client(base_url=server.url, timeout=60) as c:
            sample = {"prompt": QUESTION, "completion": GOOD, "ground_truth": "9"}
            replies = [c.post("/get_reward", json={"query": [QUESTION + "\n" + GOOD], "prompts": [QUESTION + "\n"],
                                                   "labels": ["9"]}),
                       c.post("/score", json=sample), c.post("/steps", json=sample), c.get("/ready")]
            for r in replies:  # a 200 with the no-step reward before
                assert r.status_code == 503 and int(r.headers["Retry-After"]) > 0, (r.request.url, r.text)
            gate.set()
            assert engine.batcher.wait_ready(120)
            assert c.post("/score", json=sample).status_code == 200
    finally:
        gate.set()
        server.stop()
