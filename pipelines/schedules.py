"""The nightly refresh: at 02:00 UTC, materialize today's partition of every registered source."""


import dagster as dg

from assets.partitions import SOURCES, partition_key
from pipelines.jobs import refresh_job

NIGHTLY_CRON = "0 2 * * *"  # 02:00 UTC: after midnight, so today's partition exists


@dg.schedule(job=refresh_job, cron_schedule=NIGHTLY_CRON, execution_timezone="UTC",
             description="Nightly data refresh: today's (day, source) partition of every registered source.")
def nightly_refresh(context: dg.ScheduleEvaluationContext):
    day = context.scheduled_execution_time.date().isoformat()
    sources = sorted(context.instance.get_dynamic_partitions(SOURCES.name))
    if not sources:
        return dg.SkipReason("no sources registered yet; the inbox sensor registers 'arith' on its first tick")
    return [dg.RunRequest(run_key=f"nightly-{day}-{s}", partition_key=partition_key(day, s),
                          tags={"prm/trigger": "nightly"}) for s in sources]
