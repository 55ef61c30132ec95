"""Every Delta table under a warehouse root as sorted JSON lines, with the columns that differ between two identical
runs masked (run ids, times, durations, absolute paths), so a refactor's before and after can be diffed.

Run: ``.venv/bin/python benchmarks/table_dump.py ROOT --checkout DIR > before.jsonl``; after the change the same on
a fresh root of the same run, then ``diff before.jsonl after.jsonl`` (empty: the tables are identical). ``--checkout``
is the project folder whose code wrote ROOT: paths under it (the model cache) are masked, so two checkouts compare.
Durations are masked wherever they are: a column, a key inside a JSON column (``train_runtime_s``), or the value of a
metric row that names one (``run/train_s``); so are the random part of temporary folder names. The last line of
stderr is one JSON object: per table its row count and the digest of its masked rows.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from deltalake import DeltaTable

# A column whose value is a clock reading, a duration, a run's identity or a machine path: masked.
MASKED = re.compile(r"(^|_)(run_id|run|created_at|updated_at|finished_at|started_at|at|seconds|wall_s|elapsed|"
                    r"duration|timestamp|ts|time|path|uri|host|pid)$")
UUIDISH = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
# A duration or rate by name: ``train_s``, ``train_runtime_s``, ``train_tokens_per_s``, ``step_time``.
DURATION = re.compile(r"(_s|_per_s|runtime|seconds|time)$")
# tempfile.mkdtemp's random suffix (8 of [a-z0-9_]) after a prefix ending in "-" or "_", inside a path.
TEMP_SUFFIX = re.compile(r"(?<=[-_])[a-z0-9_]{8}(?=/)")


def _mask_json(value: Any) -> Any:
    """A parsed JSON value with every duration key's number masked."""
    if isinstance(value, dict):
        return {k: "*" if DURATION.search(k) and isinstance(v, int | float) else _mask_json(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_mask_json(v) for v in value]
    return value


def _mask(column: str, value: Any, places: dict[str, str]) -> Any:
    """The value as dumped: masked columns become "*"; in strings, run ids, ``places`` (path -> name) and temporary
    folders' random suffixes are replaced, and a JSON object or list has its durations masked."""
    if MASKED.search(column):
        return "*"
    if not isinstance(value, str):
        return value
    for path, name in places.items():
        value = value.replace(path, name)
    value = TEMP_SUFFIX.sub("<tmp>", UUIDISH.sub("<uuid>", value))
    if value.lstrip()[:1] in ("{", "["):
        try:
            return json.dumps(_mask_json(json.loads(value)), sort_keys=True)
        except ValueError:
            return value
    return value


def _mask_row(row: dict[str, Any], places: dict[str, str]) -> dict[str, Any]:
    out = {k: _mask(k, v, places) for k, v in row.items()}
    if isinstance(row.get("metric"), str) and DURATION.search(row["metric"]) and "value" in out:
        out["value"] = "*"  # a metrics table's row that measures time (rl_metrics' run/train_s)
    return out


def tables(root: Path) -> list[Path]:
    """The folders under ``root`` that hold a Delta table, in name order."""
    return sorted(p.parent for p in root.rglob("_delta_log"))


def dump(root: Path, checkout: Path | None = None) -> dict[str, dict[str, Any]]:
    """Print every table's masked rows, sorted; return {table: {"rows", "digest"}}."""
    places = {str(root): "<root>", **({str(checkout): "<checkout>"} if checkout else {})}
    summary: dict[str, dict[str, Any]] = {}
    for folder in tables(root):
        name = str(folder.relative_to(root))
        rows = DeltaTable(str(folder)).to_pyarrow_table().to_pylist()
        lines = sorted(json.dumps(_mask_row(row, places), sort_keys=True, default=str) for row in rows)
        for line in lines:
            print(f"{name}\t{line}")
        summary[name] = {"rows": len(lines), "digest": hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16]}
    return summary


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("root", type=Path, help="a local warehouse root")
    p.add_argument("--checkout", type=Path, default=None, help="the project folder whose code wrote ROOT")
    args = p.parse_args()
    print(json.dumps(dump(args.root.resolve(), args.checkout.resolve() if args.checkout else None)), file=sys.stderr)
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip interpreter teardown: delta-rs/pyarrow threads can abort it ("terminate called without an active
    # exception", delta-io/delta-rs#2184) after the dump is complete; the exit status is the dump's.
    os._exit(0)


if __name__ == "__main__":
    main()
