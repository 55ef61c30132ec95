"""Asset checks: thin wrappers over ``warehouse.checks`` with counts in metadata."""

# No `from __future__ import annotations`: Dagster reads Config/resource annotations at definition time.
import dagster as dg

from assets.problems import problems
from pipelines.resources import WarehouseResource
from warehouse import checks as wc
from warehouse import connect


def _result(outcome: wc.CheckOutcome, severity: dg.AssetCheckSeverity = dg.AssetCheckSeverity.ERROR):
    return dg.AssetCheckResult(passed=outcome.passed, severity=severity, description=outcome.description,
                               metadata=outcome.counts)


def table_checks(asset: dg.AssetsDefinition, table: str) -> list[dg.AssetChecksDefinition]:
    """Schema and primary-key checks for the table an asset writes; blocking, since bad rows poison training."""

    @dg.asset_check(asset=asset, name=f"{table}_schema_conforms", blocking=True,
                    description=f"Every Parquet file of {table} has the table's schema.")
    def schema_check(warehouse: WarehouseResource) -> dg.AssetCheckResult:
        return _result(wc.schema_conforms(warehouse.get(), table))

    @dg.asset_check(asset=asset, name=f"{table}_ids_unique", blocking=True,
                    description=f"No two rows of {table} share a primary key.")
    def unique_check(warehouse: WarehouseResource) -> dg.AssetCheckResult:
        return _result(wc.ids_unique(warehouse.get(), table))

    return [schema_check, unique_check]


@dg.asset_check(asset=problems, blocking=True, description="Every problem has a gold answer; generated "
                "problems' gold solutions end in that answer.")
def problems_gold_answers(warehouse: WarehouseResource) -> dg.AssetCheckResult:
    wh = warehouse.get()
    con = connect(wh.root)
    (bad,) = con.execute(
        "SELECT count(*) FROM problems WHERE trim(gold_answer) = '' OR (task LIKE 'arith_%' AND "
        "NOT ends_with(trim(gold_solution), 'Answer: ' || gold_answer))"
    ).fetchall()[0]
    (rows,) = con.execute("SELECT count(*) FROM problems").fetchall()[0]
    desc = f"{rows} problems, all with a consistent gold answer" if not bad else f"{bad} problems lack a gold answer"
    return _result(wc.CheckOutcome(bad == 0, desc, {"rows": rows, "bad": bad}))


CHECKS = [*table_checks(problems, "problems"), problems_gold_answers]
