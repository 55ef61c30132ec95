"""The refresh graph on an ``s3://`` warehouse (a real S3-compatible server, moto, on 127.0.0.1): every table the
run writes reads back with DuckDB identical to the same run on a local folder (the session's ``refresh_run``,
tests/pipelines/conftest.py)."""

from __future__ import annotations

import pytest

from assets.partitions import partition_key, register_sources
from assets.resources import WarehouseResource
from pipelines.definitions import defs
from tests.pipelines.conftest import REFRESH_DAY, RefreshRun, tiny_run_config
from warehouse import Warehouse, connect
from warehouse.schemas import PRIMARY_KEYS, TABLES

pytestmark = pytest.mark.slow
PARTITION = partition_key(REFRESH_DAY, "arith")  # the shared local run's
PROVENANCE = ("run_id", "created_at")  # differ between any two runs


def _run(instance, root: str, config: dict) -> None:
    job = defs.resolve_job_def("refresh")
    result = job.execute_in_process(partition_key=PARTITION, instance=instance, run_config=config,
                                    resources={"warehouse": WarehouseResource(data_root=root)}, raise_on_error=False)
    assert result.success


def _tables(root: str) -> dict[str, list[tuple]]:
    con = connect(root)
    out = {}
    for table, schema in TABLES.items():
        columns = ", ".join(n for n in schema.names if n not in PROVENANCE)
        out[table] = con.execute(f"SELECT {columns} FROM {table} ORDER BY {', '.join(PRIMARY_KEYS[table])}").fetchall()
    return out


def test_the_refresh_run_on_s3_reads_back_identical_to_the_local_run(
    instance, s3_root: str, refresh_run: RefreshRun, tiny_policy_dir, tiny_context
) -> None:
    assert refresh_run.result.success
    register_sources(instance, ["arith"])
    local = str(refresh_run.root)  # the same job, partition and config on a local folder
    _run(instance, s3_root, tiny_run_config(str(tiny_policy_dir), tiny_context))
    here, there = _tables(local), _tables(s3_root)
    assert {t: len(r) for t, r in there.items()} == {t: len(r) for t, r in here.items()}
    assert sum(len(r) for r in there.values()) > 100 and there["step_labels"]
    for table in TABLES:
        assert there[table] == here[table], table
    assert all(v is not None for t, v in Warehouse(s3_root).versions().items() if here[t])
