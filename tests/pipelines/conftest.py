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
def resource(tmp_path: Path) -> WarehouseResource:
    (tmp_path / "inbox").mkdir()
    return WarehouseResource(data_root=str(tmp_path / "warehouse"), inbox=str(tmp_path / "inbox"))
