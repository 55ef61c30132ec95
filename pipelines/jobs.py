"""Jobs: the refresh of one (day, source) partition through the whole asset graph."""

from __future__ import annotations

import dagster as dg

from pipelines.partitions import PARTITIONS

# Every partitioned asset, in dependency order; its checks run in the same run and block on failure.
refresh_job = dg.define_asset_job(
    name="refresh",
    selection=dg.AssetSelection.all(),
    partitions_def=PARTITIONS,
    description="Materialize the whole pipeline for one (day, source) partition.",
)
