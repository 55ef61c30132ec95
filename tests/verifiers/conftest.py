"""Fixtures for verifier tests: real-data rows (skipped when ../shared/data is absent)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest


@pytest.fixture
def read_jsonl(shared_file: Callable[[str], Path]) -> Callable[[str], list[dict]]:
    """``read_jsonl("gsm8k/test.jsonl")``: rows of a shared dataset file, or skip the test."""

    def read(relative: str) -> list[dict]:
        with shared_file(relative).open() as f:
            return [json.loads(line) for line in f]

    return read
