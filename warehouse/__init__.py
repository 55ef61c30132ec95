"""The warehouse: versioned schemas, validated Delta Lake commits (local or s3://), DuckDB snapshot views; the
label-method table is its own package, :mod:`warehouse.methods`.

Never imports dagster.
"""

from warehouse.config import PROJECT_ROOT, default_root
from warehouse.constants import VACUUM_RETENTION_HOURS
from warehouse.db import Snapshot, connect, snapshot_connection, snapshot_versions, source_clause
from warehouse.location import is_remote
from warehouse.locks import exclusive
from warehouse.maintenance import UnsafeRetention, check_retention, maintain_table
from warehouse.model_registry import (
    ACCEPTED,
    REJECTED,
    ModelEntry,
    latest_model,
    lineage,
    model_versions,
    register_models,
)
from warehouse.schemas import LABEL_STATUSES, TABLES
from warehouse.store import Warehouse, is_partition_value, new_run_id, today

__all__ = [
    "ACCEPTED",
    "LABEL_STATUSES",
    "PROJECT_ROOT",
    "REJECTED",
    "TABLES",
    "VACUUM_RETENTION_HOURS",
    "ModelEntry",
    "Snapshot",
    "UnsafeRetention",
    "Warehouse",
    "check_retention",
    "connect",
    "default_root",
    "exclusive",
    "is_partition_value",
    "is_remote",
    "latest_model",
    "lineage",
    "maintain_table",
    "model_versions",
    "new_run_id",
    "register_models",
    "snapshot_connection",
    "snapshot_versions",
    "source_clause",
    "today",
]
