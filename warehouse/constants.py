"""Fixed numbers and names of the warehouse, each with its reason."""

from __future__ import annotations

# Delta partition columns of every table: the logical (source, day) plus who wrote the rows, so replacing
# one writer's rows of a partition removes whole files instead of rewriting shared ones.
DELTA_PARTITIONS: tuple[str, ...] = ("source", "day", "writer")
WRITER_COLUMN = "writer"

# Commits lost to a concurrent writer are retried this many times (delta-rs retries plain appends itself).
COMMIT_ATTEMPTS = 30

# The marker file at the root: the schema version and the storage format.
MARKER = "warehouse.json"
FORMAT = "delta"

# Locks of Warehouse.table_lock: the file ``<root>/.locks/<table>.lock`` for a local root (never deleted:
# deleting a lock file races its next user), the lease table ``<root>/.locks/<table>`` for an s3:// root.
LOCK_DIR = ".locks"

# Vacuum keeps files removed less than this long ago, so readers of recent versions (time travel, a
# long query) still find them. Delta's own default.
VACUUM_RETENTION_HOURS = 168

# The model_lineage view follows parent_version at most this many generations: far beyond any flywheel (one
# generation per round), and it bounds the recursion should a foreign writer store a chain without end.
MAX_LINEAGE_DEPTH = 1000
