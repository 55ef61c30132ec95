"""The warehouse: versioned schemas, validated Delta Lake commits (local or s3://), DuckDB snapshot views.

Never imports dagster.
"""

from warehouse.config import PROJECT_ROOT, default_root
from warehouse.constants import VACUUM_RETENTION_HOURS
from warehouse.db import Snapshot, connect, snapshot_connection, snapshot_versions, source_clause
from warehouse.location import is_remote
from warehouse.locks import exclusive
from warehouse.maintenance import UnsafeRetention, check_retention, maintain_table
from warehouse.methods import (
    COMPARED_METHODS,
    CONSENSUS,
    JUDGE,
    LABEL_SOURCES,
    REFERENCE_METHODS,
    TRUTH,
    label_assets,
    method,
    method_names,
    recipe_label_assets,
)
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
    "COMPARED_METHODS",
    "CONSENSUS",
    "JUDGE",
    "LABEL_SOURCES",
    "LABEL_STATUSES",
    "PROJECT_ROOT",
    "REFERENCE_METHODS",
    "REJECTED",
    "TABLES",
    "TRUTH",
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
    "label_assets",
    "latest_model",
    "lineage",
    "maintain_table",
    "method",
    "method_names",
    "model_versions",
    "new_run_id",
    "recipe_label_assets",
    "register_models",
    "snapshot_connection",
    "snapshot_versions",
    "source_clause",
    "today",
]
