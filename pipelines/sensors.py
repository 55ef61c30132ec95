"""The inbox sensor: registers sources and refreshes a source when its file or its sidecar recipe appears or
changes; a file no recipe makes the run's policy fit for is refused with what to do (pipelines.inbox)."""


import datetime as dt
import json

import dagster as dg

from assets.partitions import SOURCES, partition_key
from assets.resources import GenerationResource, WarehouseResource
from pipelines.inbox import inbox_request, sidecar_path
from pipelines.jobs import refresh_job
from pipelines.recipe import RecipeError
from prm.tasks import BUILTIN_SOURCES, scan_inbox


def _read_cursor(cursor: str | None) -> tuple[dict[str, float], dict[str, str]]:
    """(file name -> mtime seen, file name -> refusal already logged); older cursors hold only the first."""
    state = json.loads(cursor) if cursor else {}
    if "files" not in state:  # the first cursor format: a flat {file name: mtime}
        return state, {}
    return state["files"], state.get("refused", {})


def _mtime(path) -> float:
    """The sidecar's mtime, its link's when it is a broken link, 0.0 when there is none."""
    for stat in (path.stat, path.lstat):
        try:
            return stat().st_mtime
        except OSError:
            continue
    return 0.0


@dg.sensor(job=refresh_job, minimum_interval_seconds=30, default_status=dg.DefaultSensorStatus.RUNNING,
           description="New or changed problem files in the inbox become sources and get today's partition.")
def inbox_sensor(context: dg.SensorEvaluationContext, warehouse: WarehouseResource,
                 generation: GenerationResource):
    seen, logged = _read_cursor(context.cursor)
    inbox = warehouse.inbox_path()
    scan = scan_inbox(inbox)
    refused = dict(scan.refused)
    requests, current, ready = [], {}, []
    for file in scan.files:
        # The file's stamp: its own mtime or its sidecar's, whichever is later, so adding a sidecar requests a run.
        stamp = max(file.mtime, _mtime(sidecar_path(inbox, file.source)))
        if seen.get(file.path.name) == stamp:
            current[file.path.name] = stamp
            continue
        try:
            run_config, selection = inbox_request(inbox, file.source, generation.model)
        except RecipeError as exc:  # not recorded as seen: the next tick looks again (a sidecar may appear)
            refused[file.path.name] = f"ignoring {file.path.name}: {exc.one_line()}"
            continue
        except (OSError, ValueError) as exc:  # one bad file never stops the tick for the others
            refused[file.path.name] = f"ignoring {file.path.name}: {' '.join(str(exc).split())[:300]}"
            continue
        current[file.path.name] = stamp
        ready.append((file, stamp, run_config, selection))
    for name, message in refused.items():
        if logged.get(name) != message:  # once per refusal, not every 30 s
            context.log.warning(message)
    day = dt.datetime.now(dt.UTC).date().isoformat()
    registered = set(context.instance.get_dynamic_partitions(SOURCES.name))
    new_sources = [s for s in BUILTIN_SOURCES if s not in registered]
    for file, stamp, run_config, selection in ready:
        if file.source not in registered and file.source not in new_sources:
            new_sources.append(file.source)
        requests.append(dg.RunRequest(run_key=f"inbox-{file.path.name}-{stamp}", run_config=run_config,
                                      asset_selection=[dg.AssetKey(a) for a in selection] if selection else None,
                                      partition_key=partition_key(day, file.source), tags={"prm/trigger": "inbox"}))
    # A tick that requests nothing shows why in its skip reason, so a refused file is visible in the UI.
    skip_reason = " | ".join(refused.values()) if refused and not requests else None
    return dg.SensorResult(
        run_requests=requests,
        dynamic_partitions_requests=[SOURCES.build_add_request(new_sources)] if new_sources else [],
        cursor=json.dumps({"files": current, "refused": refused}, sort_keys=True),
        skip_reason=skip_reason,
    )
