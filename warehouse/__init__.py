"""The warehouse: versioned schemas, validated Delta Lake commits (local or s3://), DuckDB snapshot views.

Never imports dagster.
"""

from warehouse.config import PROJECT_ROOT, default_root
from warehouse.constants import VACUUM_RETENTION_HOURS
from warehouse.db import Snapshot, connect, snapshot_connection, snapshot_versions, source_clause
from warehouse.delta import VersionVacuumed
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
    method,
    method_names,
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
from warehouse.schemas import LABEL_STATUSES, PRIMARY_KEYS, SCHEMA_VERSION, TABLES
from warehouse.store import Warehouse, WriteResult, is_partition_value, new_run_id, today
from warehouse.validate import SchemaError

__all__ = [
    "ACCEPTED",
    "COMPARED_METHODS",
    "CONSENSUS",
    "JUDGE",
    "LABEL_SOURCES",
    "LABEL_STATUSES",
    "PRIMARY_KEYS",
    "PROJECT_ROOT",
    "REFERENCE_METHODS",
    "REJECTED",
    "SCHEMA_VERSION",
    "TABLES",
    "TRUTH",
    "VACUUM_RETENTION_HOURS",
    "ModelEntry",
    "SchemaError",
    "Snapshot",
    "UnsafeRetention",
    "VersionVacuumed",
    "Warehouse",
    "WriteResult",
    "check_retention",
    "connect",
    "default_root",
    "exclusive",
    "is_partition_value",
    "is_remote",
    "latest_model",
    "lineage",
    "maintain_table",
    "method",
    "method_names",
    "model_versions",
    "new_run_id",
    "register_models",
    "snapshot_connection",
    "snapshot_versions",
    "source_clause",
    "today",
]
