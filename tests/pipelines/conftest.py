"""Dagster fixtures: a throwaway instance and resources pointing at a tmp warehouse."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from pipelines.resources import WarehouseResource


@pytest.fixture
def instance(tmp_path: Path):
    home = tmp_path / "dagster_home"
    home.mkdir()
    with dg.instance_for_test(temp_dir=str(home)) as inst:
        yield inst


@pytest.fixture
def resource(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> WarehouseResource:
    """The default resource, pointed at a tmp warehouse and inbox through the environment (as users do)."""
    (tmp_path / "inbox").mkdir()
    monkeypatch.setenv("PRM_DATA_ROOT", str(tmp_path / "warehouse"))
    monkeypatch.setenv("PRM_INBOX", str(tmp_path / "inbox"))
    return WarehouseResource()
