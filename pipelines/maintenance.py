"""The weekly warehouse maintenance job: compact, vacuum and checkpoint every Delta table."""

import dagster as dg

from assets.metadata import md_table
from assets.resources import WarehouseResource
from warehouse import VACUUM_RETENTION_HOURS, UnsafeRetention, check_retention, maintain_table

WEEKLY_CRON = "0 4 * * 0"  # Sundays 04:00 UTC: after the nightly refresh (02:00) has finished


class MaintenanceConfig(dg.Config):
    """Vacuum keeps files removed less than ``retention_hours`` ago (time travel reaches that far back). A retention
    below ``warehouse.maintenance.SAFE_RETENTION_HOURS`` is refused unless ``force`` (readers of older versions
    may then fail); files no commit references yet are never vacuumed younger than that floor, forced or not."""

    retention_hours: int = VACUUM_RETENTION_HOURS
    dry_run: bool = False
    force: bool = False


@dg.op(description="Compact small files, vacuum unreferenced ones and checkpoint the log, table by table.")
def maintain_warehouse(context: dg.OpExecutionContext, config: MaintenanceConfig,
                       warehouse: WarehouseResource) -> dg.Output[int]:
    try:
        check_retention(config.retention_hours, config.force)
    except UnsafeRetention as exc:
        raise dg.Failure(description=str(exc)) from None
    wh = warehouse.get()
    done = []
    for i, table in enumerate(wh.tables(), 1):
        result = maintain_table(wh, table, retention_hours=config.retention_hours, dry_run=config.dry_run,
                                force=config.force)
        context.log.info(f"[{i}/{len(wh.tables())}] {table}: {result or 'never written'}")
        if result is not None:
            done.append(result.as_row())
    return dg.Output(len(done), metadata={
        "tables": md_table(done) if done else dg.MetadataValue.md("_no table written yet_"),
        "files_compacted": sum(r["files_compacted"] for r in done),
        "files_vacuumed": sum(r["files_vacuumed"] for r in done),
    })


@dg.job(name="maintenance",
        description="Warehouse maintenance: compaction, vacuum and a log checkpoint of every Delta table.",
        tags={"dagster/concurrency_key": "warehouse_maintenance"})
def maintenance_job() -> None:
    maintain_warehouse()


weekly_maintenance = dg.ScheduleDefinition(
    name="weekly_maintenance", job=maintenance_job, cron_schedule=WEEKLY_CRON, execution_timezone="UTC",
    description="Weekly warehouse maintenance (compaction, vacuum, checkpoint) of every Delta table.")
