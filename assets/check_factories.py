"""Check factories every asset module may use: schema and key checks of a table, orphan checks."""

# No `from __future__ import annotations`: Dagster reads Config/resource annotations at definition time.
import dagster as dg

from assets.resources import WarehouseResource
from warehouse import checks as wc


def result(outcome: wc.CheckOutcome, severity: dg.AssetCheckSeverity = dg.AssetCheckSeverity.ERROR):
    return dg.AssetCheckResult(passed=outcome.passed, severity=severity, description=outcome.description,
                               metadata=outcome.counts)


def table_checks(asset: dg.AssetsDefinition, table: str) -> list[dg.AssetChecksDefinition]:
    """Schema and primary-key checks for the table an asset writes; blocking, since bad rows poison training."""

    @dg.asset_check(asset=asset, name=f"{table}_schema_conforms", blocking=True,
                    description=f"Every data file of the {table} Delta table has the table's schema.")
    def schema_check(warehouse: WarehouseResource) -> dg.AssetCheckResult:
        return result(wc.schema_conforms(warehouse.get(), table))

    @dg.asset_check(asset=asset, name=f"{table}_ids_unique", blocking=True,
                    description=f"No two rows of {table} share a primary key.")
    def unique_check(warehouse: WarehouseResource) -> dg.AssetCheckResult:
        return result(wc.ids_unique(warehouse.get(), table))

    return [schema_check, unique_check]


def orphan_check(asset: dg.AssetsDefinition, child: str, parent: str, key: str,
                 where: str | None = None) -> dg.AssetChecksDefinition:
    """Blocking: every ``child.key`` (of the rows ``where`` selects: the asset's own) has its ``parent`` row."""

    @dg.asset_check(asset=asset, name=f"{child}_have_{parent}", blocking=True,
                    description=f"Every {child} row{f' with {where}' if where else ''} refers to an existing "
                    f"{parent} row ({key}).")
    def check(warehouse: WarehouseResource) -> dg.AssetCheckResult:
        return result(wc.no_orphans(warehouse.get(), child, parent, key, where))

    return check
