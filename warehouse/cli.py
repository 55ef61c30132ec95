"""``prm-warehouse``: read-only SQL over the warehouse from the shell."""

from __future__ import annotations

import sys
from pathlib import Path

import click
import duckdb

from warehouse.config import ENV_VAR, default_root
from warehouse.db import CONVENIENCE_VIEWS, connect
from warehouse.schemas import PARTITION_COLUMNS, PRIMARY_KEYS, TABLES

FORMATS = ("table", "csv", "json", "parquet")


def _fail(what: str, todo: str) -> None:
    click.echo(f"Error: {what} - {todo}", err=True)
    sys.exit(1)


def root_option(func):
    return click.option(
        "--root",
        type=click.Path(file_okay=False, path_type=Path),
        default=None,
        help=f"Warehouse data root (default: ${ENV_VAR} or <project>/data/warehouse).",
    )(func)


def _open(root: Path | None) -> duckdb.DuckDBPyConnection:
    root = root or default_root()
    if not root.exists():
        _fail(f"no warehouse at {root}", f"run `make demo` first or set --root / ${ENV_VAR}")
    return connect(root)


@click.group()
def main() -> None:
    """Query the prm-pipeline warehouse (Parquet files) with DuckDB SQL, read-only.

    Example: prm-warehouse sql "SELECT method, count(*) FROM step_labels GROUP BY 1"
    """


@main.command()
@click.argument("query")
@root_option
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True,
              help="How to print or write the result.")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the result to this file instead of stdout (required for parquet).")
@click.option("--max-rows", type=int, default=40, show_default=True, help="Rows shown by --format table.")
def sql(query: str, root: Path | None, fmt: str, output: Path | None, max_rows: int) -> None:
    """Run a SQL query; QUERY '-' reads it from stdin.

    Example: prm-warehouse sql "SELECT * FROM labeled_steps LIMIT 5" --format csv -o steps.csv
    """
    if query == "-":
        query = sys.stdin.read()
    con = _open(root)
    try:
        rel = con.sql(query)
        if rel is None:
            return
        if fmt == "table" and output is None:
            rel.show(max_rows=max_rows, max_width=200)
            return
        data = rel.fetch_arrow_table()
    except duckdb.Error as exc:
        _fail(str(exc).splitlines()[0] if str(exc) else type(exc).__name__,
              "check the SQL; `prm-warehouse tables` lists the tables and views")
    _emit(data, fmt, output)


def _emit(data, fmt: str, output: Path | None) -> None:
    import pyarrow.parquet as pq

    if fmt == "parquet" and output is None:
        _fail("parquet output is binary", "pass --output FILE.parquet")
    if fmt == "parquet":
        pq.write_table(data, output)
    else:  # csv, or json with one object per line (also used for --format table with --output)
        frame = data.to_pandas()
        text = frame.to_csv(index=False) if fmt == "csv" else frame.to_json(
            orient="records", lines=True, date_format="iso").rstrip("\n") + "\n"
        if output is None:
            sys.stdout.write(text)
        else:
            output.write_text(text)
    if output is not None:
        click.echo(f"wrote {data.num_rows} rows to {output}", err=True)


@main.command()
@root_option
def tables(root: Path | None) -> None:
    """List tables and views with their row counts.

    Example: prm-warehouse tables
    """
    con = _open(root)
    width = max(len(n) for n in [*TABLES, *CONVENIENCE_VIEWS])
    for name in sorted(TABLES):
        (count,) = con.execute(f"SELECT count(*) FROM {name}").fetchall()[0]
        click.echo(f"{name:<{width}}  table  {count:>10,} rows")
    for name in sorted(CONVENIENCE_VIEWS):
        click.echo(f"{name:<{width}}  view")


@main.command()
@click.argument("table")
def schema(table: str) -> None:
    """Show a table's columns, types and key.

    Example: prm-warehouse schema step_labels
    """
    if table not in TABLES:
        _fail(f"unknown table {table!r}", f"choose one of {', '.join(sorted(TABLES))}")
    sch = TABLES[table]
    click.echo(f"{table} (schema v{sch.metadata[b'schema_version'].decode()}, key: "
               f"{', '.join(PRIMARY_KEYS[table])})")
    for field in sch:
        flags = [] if field.nullable else ["required"]
        if field.name in PARTITION_COLUMNS:
            flags.append("partition")
        click.echo(f"  {field.name:<20} {field.type!s:<24} {' '.join(flags)}")


if __name__ == "__main__":
    main()
