"""The nightly schedule and the inbox sensor produce the right run requests and partition keys."""

from __future__ import annotations

import datetime as dt
import json
import os

import dagster as dg

from assets.partitions import partition_key, register_sources
from assets.resources import GenerationResource
from pipelines.schedules import flywheel_schedule, nightly_refresh
from pipelines.sensors import inbox_sensor


def _resources(resource) -> dict:
    return {"warehouse": resource, "generation": GenerationResource()}


def _nightly(instance, resource, when: dt.datetime):
    with dg.build_schedule_context(instance=instance, scheduled_execution_time=when,
                                   resources=_resources(resource)) as context:
        return nightly_refresh(context)


def _tick(instance, resource, cursor: str | None = None) -> dg.SensorResult:
    with dg.build_sensor_context(instance=instance, cursor=cursor, resources=_resources(resource)) as context:
        return inbox_sensor(context)


def test_nightly_schedule_requests_today_for_every_source(instance, resource) -> None:
    when = dt.datetime(2026, 11, 21, 2, 0, tzinfo=dt.UTC)
    skipped = _nightly(instance, resource, when)
    assert isinstance(skipped, dg.SkipReason)
    register_sources(instance, ["arith", "gsm8k"])
    # A dataset source runs with its sidecar recipe (tests/pipelines/test_recipe_inbox.py: without one it is skipped).
    (resource.inbox_path() / "gsm8k.yaml").write_text("policy: {model: smollm2-135m-instruct}\n")
    requests = _nightly(instance, resource, when)
    assert [r.partition_key for r in requests] == [partition_key("2026-11-21", "arith"),
                                                   partition_key("2026-11-21", "gsm8k")]
    assert {r.run_key for r in requests} == {"nightly-2026-11-21-arith", "nightly-2026-11-21-gsm8k"}
    assert nightly_refresh.cron_schedule == "0 2 * * *"


def test_the_flywheel_schedule_is_off_by_default_and_adds_the_first_round(instance) -> None:
    assert flywheel_schedule.default_status == dg.DefaultScheduleStatus.STOPPED
    when = dt.datetime(2026, 11, 21, 4, 0, tzinfo=dt.UTC)
    request = flywheel_schedule(dg.build_schedule_context(instance=instance, scheduled_execution_time=when))
    assert (request.partition_key, request.run_key) == ("0", "flywheel-0-2026-11-21")
    assert instance.get_dynamic_partitions("flywheel_round") == ["0"]
    # Round 0 never finished: the next night runs it again instead of adding round 1.
    again = flywheel_schedule(dg.build_schedule_context(instance=instance, scheduled_execution_time=when))
    assert again.partition_key == "0" and instance.get_dynamic_partitions("flywheel_round") == ["0"]


def test_inbox_sensor_registers_sources_and_requests_new_files(instance, resource) -> None:
    first = _tick(instance, resource)
    assert first.run_requests == []
    assert first.dynamic_partitions_requests[0].partition_keys == ["arith", "logic"]

    inbox = resource.inbox_path()
    (inbox / "gsm8k_small.jsonl").write_text(json.dumps({"question": "q", "answer": "x\n#### 1"}) + "\n")
    (inbox / "gsm8k_small.yaml").write_text("policy: {model: smollm2-135m-instruct}\n")
    (inbox / "notes.txt").write_text("ignored: not a dataset file")
    instance.add_dynamic_partitions("source", ["arith", "logic"])
    second = _tick(instance, resource, first.cursor)
    today = dt.datetime.now(dt.UTC).date().isoformat()
    assert [r.partition_key for r in second.run_requests] == [partition_key(today, "gsm8k_small")]
    assert second.dynamic_partitions_requests[0].partition_keys == ["gsm8k_small"]

    instance.add_dynamic_partitions("source", ["gsm8k_small"])
    third = _tick(instance, resource, second.cursor)
    assert third.run_requests == [] and third.dynamic_partitions_requests == []

    path = inbox / "gsm8k_small.jsonl"
    os.utime(path, (path.stat().st_atime, path.stat().st_mtime + 10))  # the file changed
    fourth = _tick(instance, resource, third.cursor)
    assert len(fourth.run_requests) == 1
