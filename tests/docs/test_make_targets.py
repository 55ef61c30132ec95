"""The Makefile's front door: targets named like folders still run (``docs/`` exists, so ``make docs`` built nothing
while ``docs`` was not phony), and CI's lint includes Dagster's own definitions check."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _dry_run(target: str) -> str:
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    done = subprocess.run(["make", "-n", target], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("target", ["docs", "test", "lint", "demo"])
def test_a_target_named_like_a_folder_still_runs(target):
    assert (ROOT / "docs").is_dir()
    assert "is up to date" not in _dry_run(target)


def test_make_docs_builds_the_site_strictly():
    assert "mkdocs build --strict" in _dry_run("docs")


def test_lint_and_so_ci_check_the_dagster_definitions():
    lint = _dry_run("lint")
    assert "dg check defs" in lint and "lint-imports" in lint and "ruff check" in lint
    assert "dg check defs" in _dry_run("test")  # CI runs `make test` (.ci/run)
