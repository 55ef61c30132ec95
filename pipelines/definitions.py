"""The Dagster code location: ``dagster dev`` loads ``defs`` from here (see pyproject's [tool.dagster])."""

import dagster as dg

from assets.checks import CHECKS
from assets.problems import problems
from pipelines.jobs import refresh_job
from pipelines.resources import WarehouseResource
from pipelines.schedules import nightly_refresh
from pipelines.sensors import inbox_sensor

defs = dg.Definitions(
    assets=[problems],
    asset_checks=CHECKS,
    jobs=[refresh_job],
    schedules=[nightly_refresh],
    sensors=[inbox_sensor],
    resources={"warehouse": WarehouseResource()},
)
