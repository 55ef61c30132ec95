"""Hostile inboxes: refused files are named with what to do, bad and repeated rows are counted in metadata."""

from __future__ import annotations

import datetime as dt
import json

import dagster as dg

from assets.partitions import partition_key, register_sources
from assets.resources import GenerationResource
from pipelines.definitions import defs
from pipelines.sensors import inbox_sensor
from prm.tasks.sources import scan_inbox
from warehouse import connect


def _tick(instance, resource, cursor: str | None = None) -> dg.SensorResult:
    resources = {"warehouse": resource, "generation": GenerationResource()}
    with dg.build_sensor_context(instance=instance, cursor=cursor, resources=resources) as context:
        return inbox_sensor(context)


def test_the_sensor_survives_a_dangling_symlink_and_refuses_a_builtin_name(instance, resource) -> None:
    inbox = resource.inbox_path()
    (inbox / "gone.jsonl").symlink_to(inbox / "deleted.jsonl")  # used to crash every tick
    (inbox / "arith.jsonl").write_text(json.dumps({"question": "q", "answer": "#### 1"}) + "\n")
    (inbox / "mine.jsonl").write_text(json.dumps({"question": "q", "answer": "#### 1"}) + "\n")
    (inbox / "mine.yaml").write_text("policy: {model: smollm2-135m-instruct}\n")  # its recipe (pipelines.inbox)
    first = _tick(instance, resource)
    today = dt.datetime.now(dt.UTC).date().isoformat()
    assert [r.partition_key for r in first.run_requests] == [partition_key(today, "mine")]
    assert first.dynamic_partitions_requests[0].partition_keys == ["arith", "logic", "mine"]

    refused = scan_inbox(inbox).refused
    assert sorted(refused) == ["arith.jsonl", "gone.jsonl"]
    assert "built-in source" in refused["arith.jsonl"] and "rename the file" in refused["arith.jsonl"]
    assert "deleted.jsonl" in refused["gone.jsonl"] and "fix or remove the link" in refused["gone.jsonl"]

    # A tick that requests nothing says why the remaining files are not used.
    instance.add_dynamic_partitions("source", ["arith", "logic", "mine"])
    second = _tick(instance, resource, first.cursor)
    assert second.run_requests == []
    reason = second.skip_reason.skip_message
    assert "arith.jsonl" in reason and "arith_data.jsonl" in reason and "gone.jsonl" in reason


def test_rejected_and_repeated_rows_show_in_the_problems_metadata(instance, resource) -> None:
    lines = [
        {"question": "Tom has 2 apples and buys 3. How many?", "answer": "2+3=<<2+3=5>>5\n#### 5"},
        {"question": "Ann has 4 pens and loses 1. How many?", "answer": "She loses one.\n4-1=<<4-1=3>>3 pens."},
        {"question": 12, "answer": "#### 12"},
        {"question": "Tom has 2 apples and buys 3. How many?", "answer": "5\n#### 5"},
    ]
    path = resource.inbox_path() / "mixed.jsonl"
    path.write_text("\n".join(json.dumps(row) for row in lines) + "\n")
    register_sources(instance, ["mixed"])
    result = defs.resolve_job_def("refresh").execute_in_process(
        partition_key=partition_key("2026-11-20", "mixed"), instance=instance, raise_on_error=False,
        asset_selection=[dg.AssetKey("problems")])
    assert result.success
    metadata = result.asset_materializations_for_node("problems")[0].metadata
    assert metadata["dagster/row_count"].value == 1
    assert metadata["rejected_rows"].value == 2 and metadata["duplicate_rows"].value == 1
    table = metadata["rejected"].value
    assert "| mixed.jsonl" not in table and f"| {path} | 2 |" in table and f"| {path} | 3 |" in table
    assert "repeats the question of line 1" in table
    checks = {e.check_name: e.passed for e in result.get_asset_check_evaluations()}
    assert checks["problems_ids_unique"] and checks["problems_gold_answers"]
    rows = connect(resource.get().root).execute("SELECT task, gold_answer FROM problems").fetchall()
    assert rows == [("gsm8k", "5")]


def test_a_file_name_the_warehouse_cannot_store_as_a_source_is_refused(tmp_path) -> None:
    for name in ("mydata_.jsonl", "mydata..jsonl", "-x.jsonl", "ok-name.jsonl"):
        (tmp_path / name).write_text(json.dumps({"question": "q", "answer": "#### 1"}) + "\n")
    scan = scan_inbox(tmp_path)
    assert sorted(scan.refused) == ["-x.jsonl", "mydata..jsonl", "mydata_.jsonl"]
    assert all("not ending with '.' or '_'" in why for why in scan.refused.values())
    assert [f.source for f in scan.files] == ["ok-name"]
