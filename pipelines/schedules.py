"""The nightly refresh (02:00 UTC, today's partition of every registered source, each inbox source with its sidecar
recipe) and the flywheel (04:00 UTC, the next round); both stopped until turned on in the UI."""


import dagster as dg

from assets.partitions import ROUNDS, SOURCES, partition_key
from assets.resources import GenerationResource, WarehouseResource
from pipelines.inbox import inbox_request
from pipelines.jobs import flywheel_job, refresh_job
from pipelines.recipe import RecipeError

NIGHTLY_CRON = "0 2 * * *"  # 02:00 UTC: after midnight, so today's partition exists
FLYWHEEL_CRON = "0 4 * * *"  # 04:00 UTC: after the nightly refresh


@dg.schedule(job=refresh_job, cron_schedule=NIGHTLY_CRON, execution_timezone="UTC",
             description="Nightly data refresh: today's (day, source) partition of every registered source.")
def nightly_refresh(context: dg.ScheduleEvaluationContext, warehouse: WarehouseResource,
                    generation: GenerationResource):
    day = context.scheduled_execution_time.date().isoformat()
    sources = sorted(context.instance.get_dynamic_partitions(SOURCES.name))
    if not sources:
        return dg.SkipReason("no sources registered yet; the inbox sensor registers 'arith' on its first tick")
    requests, refused = [], []
    for s in sources:
        try:
            run_config, selection = inbox_request(warehouse.inbox_path(), s, generation.model)
        except RecipeError as exc:
            context.log.warning(f"not refreshing {s}: {exc}")
            refused.append(f"{s}: {exc}")
            continue
        requests.append(dg.RunRequest(run_key=f"nightly-{day}-{s}", partition_key=partition_key(day, s),
                                      run_config=run_config, tags={"prm/trigger": "nightly"},
                                      asset_selection=[dg.AssetKey(a) for a in selection] if selection else None))
    return requests or dg.SkipReason(" | ".join(refused))


def next_round(rounds: list[str], finished: set[str]) -> str:
    """The round to run: the first one added but not finished (a failed or killed round resumes), else a new one.

    >>> next_round([], set()), next_round(["0", "1"], {"0"}), next_round(["0", "1"], {"0", "1"})
    ('0', '1', '2')
    """
    pending = [r for r in sorted(rounds, key=int) if r not in finished]
    return pending[0] if pending else str(len(rounds))


@dg.schedule(job=flywheel_job, cron_schedule=FLYWHEEL_CRON, execution_timezone="UTC",
             description="The flywheel: each night the next round (or the unfinished one) runs end to end.")
def flywheel_schedule(context: dg.ScheduleEvaluationContext):
    rounds = list(context.instance.get_dynamic_partitions(ROUNDS.name))
    finished = context.instance.get_materialized_partitions(dg.AssetKey("flywheel_policy"))
    k = next_round(rounds, set(finished))
    if k not in rounds:
        context.instance.add_dynamic_partitions(ROUNDS.name, [k])
    day = context.scheduled_execution_time.date().isoformat()
    return dg.RunRequest(run_key=f"flywheel-{k}-{day}", partition_key=k, tags={"prm/trigger": "flywheel"})
