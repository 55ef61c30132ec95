"""The inbox sensor: registers sources and refreshes a source when its file appears or changes."""


import datetime as dt
import json
import re

import dagster as dg

from pipelines.jobs import refresh_job
from pipelines.partitions import SOURCES, partition_key
from pipelines.resources import WarehouseResource
from prm.tasks.sources import BUILTIN_SOURCES, FILE_SUFFIXES

_SOURCE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


@dg.sensor(job=refresh_job, minimum_interval_seconds=30, default_status=dg.DefaultSensorStatus.RUNNING,
           description="New or changed problem files in the inbox become sources and get today's partition.")
def inbox_sensor(context: dg.SensorEvaluationContext, warehouse: WarehouseResource):
    seen: dict[str, float] = json.loads(context.cursor) if context.cursor else {}
    inbox = warehouse.inbox_path()
    files = sorted(p for p in inbox.glob("*") if p.suffix in FILE_SUFFIXES) if inbox.exists() else []
    day = dt.datetime.now(dt.UTC).date().isoformat()
    registered = set(context.instance.get_dynamic_partitions(SOURCES.name))
    new_sources = [s for s in BUILTIN_SOURCES if s not in registered]
    requests, current = [], {}
    for path in files:
        source = path.stem
        if not _SOURCE_NAME.match(source):
            context.log.warning(f"ignoring {path.name}: name it <source>.jsonl with letters, digits, '_', '-', '.'")
            continue
        current[path.name] = path.stat().st_mtime
        if seen.get(path.name) == current[path.name]:
            continue
        if source not in registered and source not in new_sources:
            new_sources.append(source)
        requests.append(dg.RunRequest(run_key=f"inbox-{path.name}-{current[path.name]}",
                                      partition_key=partition_key(day, source), tags={"prm/trigger": "inbox"}))
    return dg.SensorResult(
        run_requests=requests,
        dynamic_partitions_requests=[SOURCES.build_add_request(new_sources)] if new_sources else [],
        cursor=json.dumps(current, sort_keys=True),
    )
