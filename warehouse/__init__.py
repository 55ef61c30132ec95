"""The warehouse: versioned schemas, validated Delta Lake commits (local or s3://), DuckDB snapshot views.

Never imports dagster.
"""

from warehouse.config import default_root
from warehouse.db import connect
from warehouse.delta import VersionVacuumed
from warehouse.schemas import PRIMARY_KEYS, SCHEMA_VERSION, TABLES
from warehouse.store import Warehouse, WriteResult, new_run_id, today
from warehouse.validate import SchemaError

__all__ = [
    "PRIMARY_KEYS",
    "SCHEMA_VERSION",
    "TABLES",
    "SchemaError",
    "VersionVacuumed",
    "Warehouse",
    "WriteResult",
    "connect",
    "default_root",
    "new_run_id",
    "today",
]
