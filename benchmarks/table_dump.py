"""Every Delta table under a warehouse root as sorted JSON lines, with the columns that differ between two identical
runs masked (run ids, times, durations, absolute paths), so a refactor's before and after can be diffed.

Run: ``.venv/bin/python benchmarks/table_dump.py ROOT > before.jsonl``; after the change the same on a fresh root of
the same run, then ``diff before.jsonl after.jsonl`` (empty: the tables are identical). The last line of stderr is
one JSON object: per table its row count and the digest of its masked rows.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

from deltalake import DeltaTable

# A column whose value is a clock reading, a duration, a run's identity or a machine path: masked.
MASKED = re.compile(r"(^|_)(run_id|run|created_at|updated_at|finished_at|started_at|at|seconds|wall_s|elapsed|"
                    r"duration|timestamp|ts|time|path|uri|host|pid)$")
UUIDISH = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")


def _mask(column: str, value: Any, root: str) -> Any:
    """The value as dumped: masked columns become "*", run ids and the root inside strings are replaced."""
    if MASKED.search(column):
        return "*"
    if isinstance(value, str):
        return UUIDISH.sub("<uuid>", value.replace(root, "<root>"))
    return value


def tables(root: Path) -> list[Path]:
    """The folders under ``root`` that hold a Delta table, in name order."""
    return sorted(p.parent for p in root.rglob("_delta_log"))


def dump(root: Path) -> dict[str, dict[str, Any]]:
    """Print every table's masked rows, sorted; return {table: {"rows", "digest"}}."""
    summary: dict[str, dict[str, Any]] = {}
    for folder in tables(root):
        name = str(folder.relative_to(root))
        rows = DeltaTable(str(folder)).to_pyarrow_table().to_pylist()
        lines = sorted(json.dumps({k: _mask(k, v, str(root)) for k, v in row.items()}, sort_keys=True, default=str)
                       for row in rows)
        for line in lines:
            print(f"{name}\t{line}")
        summary[name] = {"rows": len(lines), "digest": hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16]}
    return summary


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("root", type=Path, help="a local warehouse root")
    args = p.parse_args()
    print(json.dumps(dump(args.root.resolve())), file=sys.stderr)


if __name__ == "__main__":
    main()
