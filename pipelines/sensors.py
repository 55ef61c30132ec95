"""The inbox sensor: registers sources and refreshes a source when its file appears or changes."""


import datetime as dt
import json

import dagster as dg

from assets.partitions import SOURCES, partition_key
from assets.resources import WarehouseResource
from pipelines.jobs import refresh_job
from prm.tasks.sources import BUILTIN_SOURCES, scan_inbox


def _read_cursor(cursor: str | None) -> tuple[dict[str, float], dict[str, str]]:
    """(file name -> mtime seen, file name -> refusal already logged); older cursors hold only the first."""
    state = json.loads(cursor) if cursor else {}
    if "files" not in state:  # the first cursor format: a flat {file name: mtime}
        return state, {}
    return state["files"], state.get("refused", {})


@dg.sensor(job=refresh_job, minimum_interval_seconds=30, default_status=dg.DefaultSensorStatus.RUNNING,
           description="New or changed problem files in the inbox become sources and get today's partition.")
def inbox_sensor(context: dg.SensorEvaluationContext, warehouse: WarehouseResource):
    seen, logged = _read_cursor(context.cursor)
    scan = scan_inbox(warehouse.inbox_path())
    for name, message in scan.refused.items():
        if logged.get(name) != message:  # once per refusal, not every 30 s
            context.log.warning(message)
    day = dt.datetime.now(dt.UTC).date().isoformat()
    registered = set(context.instance.get_dynamic_partitions(SOURCES.name))
    new_sources = [s for s in BUILTIN_SOURCES if s not in registered]
    requests, current = [], {}
    for file in scan.files:
        current[file.path.name] = file.mtime
        if seen.get(file.path.name) == file.mtime:
            continue
        if file.source not in registered and file.source not in new_sources:
            new_sources.append(file.source)
        requests.append(dg.RunRequest(run_key=f"inbox-{file.path.name}-{file.mtime}",
                                      partition_key=partition_key(day, file.source), tags={"prm/trigger": "inbox"}))
    # A tick that requests nothing shows why in its skip reason, so a refused file is visible in the UI.
    skip_reason = " | ".join(scan.refused.values()) if scan.refused and not requests else None
    return dg.SensorResult(
        run_requests=requests,
        dynamic_partitions_requests=[SOURCES.build_add_request(new_sources)] if new_sources else [],
        cursor=json.dumps({"files": current, "refused": scan.refused}, sort_keys=True),
        skip_reason=skip_reason,
    )
