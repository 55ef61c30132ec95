"""Jobs: the warm start of the default policy, and the refresh of one (day, source) partition."""

from __future__ import annotations

import dagster as dg

from pipelines.partitions import PARTITIONS

# The policy is not partitioned: it is trained once (cached by config) and serves every partition.
warm_start_job = dg.define_asset_job(
    name="warm_start",
    selection=dg.AssetSelection.assets("policy_model"),
    description="Train (or reuse) the warm-started default policy.",
)

# Every partitioned asset, in dependency order; its checks run in the same run and block on failure.
refresh_job = dg.define_asset_job(
    name="refresh",
    selection=dg.AssetSelection.all() - dg.AssetSelection.assets("policy_model"),
    partitions_def=PARTITIONS,
    description="Materialize the whole pipeline for one (day, source) partition.",
)
