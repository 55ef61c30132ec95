"""Shared fixtures: a fresh warehouse per test, and the path of the real datasets."""

from __future__ import annotations

from pathlib import Path

import pytest

from warehouse import Warehouse

PROJECT_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = PROJECT_ROOT.parent / "shared" / "data"


@pytest.fixture
def wh(tmp_path: Path) -> Warehouse:
    return Warehouse(tmp_path / "warehouse")


@pytest.fixture
def shared_file():
    """``shared_file("gsm8k/test.jsonl")``: a file under ../shared/data, or skip when this machine lacks it."""

    def find(relative: str) -> Path:
        path = SHARED_DATA / relative
        if not path.exists():
            pytest.skip(f"{path} is absent (the real datasets live in ../shared/data, which CI has)")
        return path

    return find
