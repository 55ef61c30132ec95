"""The reward server against text its PRM was never trained on: /steps marks it, /score pays it no more than the
right twin. The PRM is an LM-head PRM on the shipped policy (a reference that has learned the text)."""

from __future__ import annotations

import httpx
import pytest

from prm.models.constants import ARITH_POLICY_NAME
from prm.reward_server.app import RewardEngine, ServerConfig, ServerThread, create_app
from prm.rewards import RewardConfig
from prm.scoring import load_prm
from prm.training import PRMTrainConfig, train_prm
from tests.prm.training.test_off_policy import LONG_RANDOM, QUESTION, arithmetic_rows


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory):
    rows = arithmetic_rows(24, "train", 0) + arithmetic_rows(8, "val", 1)
    folder = train_prm(rows, tmp_path_factory.mktemp("prm") / "prm",
                       PRMTrainConfig(base_model=ARITH_POLICY_NAME, max_steps=20, batch_size=8, eval_steps=10_000,
                                      save_steps=10_000))
    engine = RewardEngine(lambda: load_prm(folder), ServerConfig(reward=RewardConfig(outcome_weight=0.5)))
    server = ServerThread(create_app(engine, model_name="lm-head")).start()
    engine.batcher.wait_ready(120)
    with httpx.Client(base_url=server.url, timeout=60) as c:
        yield c
    server.stop()


def _post(client: httpx.Client, path: str, completion: str) -> dict:
    r = client.post(path, json={"prompt": QUESTION.question, "completion": completion,
                                "ground_truth": str(QUESTION.answer)})
    assert r.status_code == 200, r.text
    return r.json()


@pytest.mark.parametrize("strange", ["hello world", LONG_RANDOM])
def test_steps_marks_an_off_policy_step_and_score_pays_it_no_more(client, strange):
    gold = list(QUESTION.gold_steps)
    right = "\n".join(gold) + f"\nThe answer is: {QUESTION.answer}"
    twin = "\n".join([*gold[:-1], strange, gold[-1]]) + f"\nThe answer is: {QUESTION.answer}"
    flags = [s["off_policy"] for s in _post(client, "/steps", twin)["steps"]]
    assert flags[: len(gold)] == [False] * (len(gold) - 1) + [True]  # the steps after it read past it: either way
    assert all(s["off_policy"] is False for s in _post(client, "/steps", right)["steps"])
    assert _post(client, "/score", twin)["score"] <= _post(client, "/score", right)["score"]
