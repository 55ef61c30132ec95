"""Fixed numbers and names of the warehouse, each with its reason."""

from __future__ import annotations

# A temp file older than this is abandoned even when its writer's pid now belongs to another process
# (pids are reused) or the writer ran on another host: one Parquet write takes seconds, not an hour.
STALE_TEMP_AGE_S = 3600.0

# Hidden names inside a partition folder. None ends in ``.parquet``, so neither DuckDB's glob nor
# Warehouse.files() ever reads them.
TMP_PREFIX = ".tmp-"  # a file being written; renamed into place when complete
JOURNAL_PREFIX = ".replace-"  # a committed replace whose old files may not all be gone yet
LOCK_NAME = ".lock"  # flock target of the partition; never deleted (deleting a lock file races its next user)
