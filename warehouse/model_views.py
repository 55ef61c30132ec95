"""SQL over the ``models`` registry, owned here and created as views by :func:`warehouse.db.connect`.

``warehouse.model_registry`` reads through these views, so the CLI (``prm-warehouse sql``) and the library
answer "where does this model come from" with the same query.
"""

from __future__ import annotations

from warehouse.constants import MAX_LINEAGE_DEPTH

# The columns of a registration, in the order ModelEntry.from_row reads them.
ENTRY_COLUMNS = ("name", "version", "kind", "parent_version", "round", "training_tables_json", "training_json",
                 "metrics_json", "uri", "source", "day", "run_id", "created_at")
_ENTRY = ", ".join(ENTRY_COLUMNS)
_ANCESTOR = ", ".join(f"a.{c}" for c in ENTRY_COLUMNS if c != "version")

# Newest registration first: ties on created_at go to the later day, source and run id, so the choice never
# depends on the order a scan returns rows in.
NEWEST_FIRST = "created_at DESC, day DESC, source DESC, run_id DESC, version DESC"

# The newest registration of each version (the same weights registered by two stages are two rows).
MODEL_VERSIONS = f"""
SELECT {_ENTRY} FROM models
QUALIFY row_number() OVER (PARTITION BY version ORDER BY {NEWEST_FIRST}) = 1"""


def _lineage_sql(seed: str) -> str:
    """Models with each of their ancestors, starting from the models ``seed`` (a WHERE clause over ``registered``)
    selects: depth 0 is the model itself, depth 1 its parent, ... Every column after ``ancestor_version``
    describes the ancestor. A parent that was never registered appears with its version and null columns, so a
    broken chain shows where it breaks. ``path`` stops a cycle, and MAX_LINEAGE_DEPTH any chain without end."""
    return f"""
WITH RECURSIVE registered AS ({MODEL_VERSIONS}
), chain(version, ancestor_version, depth, path) AS (
  SELECT version, version, 0, [version] FROM registered {seed}
  UNION ALL
  SELECT c.version, r.parent_version, c.depth + 1, list_append(c.path, r.parent_version)
  FROM chain c JOIN registered r ON r.version = c.ancestor_version
  WHERE r.parent_version IS NOT NULL AND NOT list_contains(c.path, r.parent_version)
    AND c.depth < {MAX_LINEAGE_DEPTH}
)
SELECT c.version, c.depth, c.ancestor_version, {_ANCESTOR}
FROM chain c LEFT JOIN registered a ON a.version = c.ancestor_version
ORDER BY c.version, c.depth"""


# Every registered model with each of its ancestors (the view ``prm-warehouse sql`` reads).
MODEL_LINEAGE = _lineage_sql("")
# One model's chain (``$version``): the filter is inside the recursion, so a lookup follows one chain instead of
# computing every model's closure and keeping one (43 s for one lookup in a 1,500-deep registry).
LINEAGE_OF = _lineage_sql("WHERE version = $version")

VIEWS: dict[str, str] = {"model_lineage": MODEL_LINEAGE}
