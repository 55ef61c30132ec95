"""The GPU run book (benchmarks/gpu.py) on CPU: --dry-run runs every stage at tiny sizes so the script cannot rot
between GPU runs; without CUDA and without --dry-run it refuses with what to do."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "gpu.py"
PARITY = 1e-3  # the vLLM engine's bound against transformers


def _run(*args: str, timeout: int) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, str(SCRIPT), *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)


def _last_json(stdout: str) -> dict:
    return json.loads(next(line for line in reversed(stdout.splitlines()) if line.startswith("{")))


@pytest.mark.slow
def test_dry_run_runs_every_stage_and_reports_what_it_skipped(tmp_path: Path) -> None:
    out = tmp_path / "gpu.json"
    proc = _run("--dry-run", "--work", str(tmp_path / "work"), "--out", str(out), timeout=1800)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result == _last_json(proc.stdout)
    assert result["dry_run"] is True and result["failed"] == {}
    if not result["cuda"]:
        assert "no GPU measurement" in result["skipped"]["cuda"]
    train = result["train"]
    assert train["steps"] == 2 and train["tokens"] > 0 and train["tokens_per_s"] > 0
    assert train["share_of_matmul_peak"] > 0 and train["train_flops_per_token"] > 6 * train["params"] * 0.9
    scoring = result["scoring"]
    for key in ("hf_steps_per_s_batched", "hf_steps_per_s_single", "flops_share_of_matmul_peak"):
        assert scoring[key] > 0
    if "vllm" in scoring["skipped"]:  # a machine without vLLM says so instead of numbers
        assert scoring["vllm_steps_per_s_batched"] is None
    else:
        assert scoring["vllm_steps_per_s_batched"] > 0 and scoring["parity_max_abs_diff"] < PARITY
    # The search workload at its dry-run size: the depth its summary reads, where the prefix cache saves PRM tokens.
    assert [row["depth"] for row in scoring["search_by_depth"]] == [8] and scoring["search_problems"] == 2
    assert scoring["incremental_prm_tokens_ratio"] > 1
    server = result["reward_server"]
    assert server["errors"] == 0 and server["clients"] == 32 and server["throughput_rps"] > 0
    assert result["grpo"]["arm"] == "prm_min" and result["grpo"]["steps"] == 2
    assert result["grpo_s_per_step"] == round(result["grpo"]["train_s"] / 2, 2)


def test_without_cuda_it_refuses_unless_dry_run() -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA: the real run book would start")
    proc = _run(timeout=300)
    assert proc.returncode == 1
    assert "pass --dry-run" in _last_json(proc.stdout)["skipped"]["all"]
