"""The README's main command: materialize the whole graph for today's ``arith`` partition, in-process.

Run history lands in the project's DAGSTER_HOME, so the run also shows in ``make ui``.
"""

from __future__ import annotations

import argparse
import sys
import time

import dagster as dg

from pipelines.instance import ensure_dagster_home
from pipelines.partitions import partition_key, register_sources
from warehouse import Warehouse, connect, today

EXAMPLE_SQL = "SELECT task, n_gold_steps, count(*) AS problems FROM problems GROUP BY ALL ORDER BY ALL"


def run(day: str, source: str, run_config: dict | None = None) -> dg.ExecuteInProcessResult:
    """Materialize every asset of the refresh job for (day, source) and return the result."""
    ensure_dagster_home()
    from pipelines.definitions import defs  # after DAGSTER_HOME is set

    instance = dg.DagsterInstance.get()
    register_sources(instance, [source])
    job = defs.resolve_job_def("refresh")
    return job.execute_in_process(partition_key=partition_key(day, source), instance=instance,
                                  run_config=run_config or {}, raise_on_error=False)


def summary(wh: Warehouse) -> str:
    con = connect(wh.root)
    lines = [f"warehouse: {wh.root}"]
    for table in wh.tables():
        (n,) = con.execute(f"SELECT count(*) FROM {table}").fetchall()[0]
        if n:
            lines.append(f"  {table:<14} {n:>8,} rows")
    lines += ["", f"example: .venv/bin/prm-warehouse sql \"{EXAMPLE_SQL}\"", str(con.sql(EXAMPLE_SQL))]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--day", default=today(), help="partition day, YYYY-MM-DD (default: today, UTC)")
    parser.add_argument("--source", default="arith", help="partition source (default: the built-in generator)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    result = run(args.day, args.source)
    took = time.perf_counter() - start
    for event in result.get_asset_check_evaluations():
        print(f"check {event.check_name:<28} {'passed' if event.passed else 'FAILED'}")
    if not result.success:
        for event in result.all_events:
            if event.is_failure:
                print(f"FAILED {event.step_key}: {event.event_specific_data.error.message.strip()}", file=sys.stderr)
        return 1
    print(f"run {result.run_id} succeeded in {took:.0f}s for day={args.day} source={args.source}\n")
    print(summary(Warehouse()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
