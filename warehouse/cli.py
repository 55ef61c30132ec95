"""``prm-warehouse``: read-only SQL over the warehouse from the shell (admin commands: warehouse/admin_cli.py)."""

from __future__ import annotations

import os
import re
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click
import duckdb

from warehouse.admin_cli import history, maintain, migrate
from warehouse.cli_options import fail, root_option
from warehouse.config import ENV_VAR, default_root
from warehouse.db import CONVENIENCE_VIEWS, connect
from warehouse.delta import VersionVacuumed
from warehouse.location import is_remote
from warehouse.schemas import PARTITION_COLUMNS, PRIMARY_KEYS, TABLES
from warehouse.strict_json import strict_json_source
from warehouse.version import SchemaVersionError

FORMATS = ("table", "csv", "json", "parquet")
# DuckDB COPY options per --format; `table` with --output writes JSON lines (a file has no terminal width).
_COPY_OPTIONS = {"csv": "FORMAT csv, HEADER", "json": "FORMAT json", "parquet": "FORMAT parquet",
                 "table": "FORMAT json"}
# Statement types that only read. SELECT covers WITH, FROM-first, VALUES, DESCRIBE, SHOW and SUMMARIZE.
_READ_STATEMENTS = (duckdb.StatementType.SELECT,)
_EXPLAIN = re.compile(r"^\s*EXPLAIN\s+(?:ANALYZE\s+)?(?P<inner>.*)$", re.IGNORECASE | re.DOTALL)
_RESULT_VIEW = "_prm_warehouse_result"


def version_option(func):
    return click.option(
        "--version", "versions", multiple=True, metavar="TABLE=N",
        help="Read TABLE as of its version N (time travel; repeatable). `prm-warehouse history TABLE` lists them.",
    )(func)


def parse_versions(pairs: tuple[str, ...]) -> dict[str, int]:
    """``("steps=3", ...)`` as {"steps": 3}; exits with what to pass when a pair is malformed."""
    out: dict[str, int] = {}
    for pair in pairs:
        table, _, number = pair.partition("=")
        if table not in TABLES or not number.isdigit():
            fail(f"--version {pair!r} is not TABLE=N with a known table",
                  f"e.g. --version steps=3; tables: {', '.join(sorted(TABLES))}")
        out[table] = int(number)
    return out


def _open(root: str | None, versions: tuple[str, ...] = ()) -> duckdb.DuckDBPyConnection:
    root = root or default_root()
    if not is_remote(root) and not Path(root).exists():
        fail(f"no warehouse at {root}", f"run `make demo` first or set --root / ${ENV_VAR}")
    try:
        return connect(root, versions=parse_versions(versions))
    except (KeyError, SchemaVersionError, VersionVacuumed) as exc:
        fail(str(exc).strip("'\""), "see `prm-warehouse history TABLE` for the versions a table has")
    except Exception as exc:  # delta-rs: an unreachable bucket, a damaged table
        fail(f"cannot open the warehouse at {root}: {exc}", "check --root, --version and the AWS variables")


@click.group()
def main() -> None:
    """Query the prm-pipeline warehouse (Delta tables) with DuckDB SQL, read-only; maintain and migrate it.

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
@version_option
def sql(query: str, root: str | None, fmt: str, output: Path | None, max_rows: int, versions: tuple[str, ...]) -> None:
    """Run a read-only SQL query; QUERY '-' reads it from stdin.

    Only reads run (SELECT, WITH, FROM, VALUES, DESCRIBE, SHOW, SUMMARIZE, EXPLAIN); COPY, ATTACH,
    INSERT, CREATE, SET, LOAD and the like are refused, so nothing can change the warehouse. Local
    files can still be read with table functions, e.g. read_csv('my.csv') or read_parquet('x/*.parquet').
    Results stream to the output, so exports of any size start at once.

    Every table is read at one snapshot (``warehouse_versions`` names it); --version steps=3 reads a past one.

    Example: prm-warehouse sql "SELECT * FROM labeled_steps LIMIT 5" --format csv -o steps.csv
    """
    if query == "-":
        query = sys.stdin.read()
    if not query.strip():
        fail("no SQL to run (the query or stdin is empty)", 'pass a query, e.g. "SELECT * FROM problems LIMIT 5"')
    if max_rows < 1:
        fail(f"--max-rows must be at least 1, got {max_rows}", "pass the number of rows to show")
    if fmt == "parquet" and output is None:
        fail("parquet output is binary", "pass --output FILE.parquet")
    if output is not None and not output.parent.is_dir():
        fail(f"folder {output.parent} does not exist", "create it first or write --output elsewhere")
    con = _open(root, versions)
    try:
        _require_reads(con, query)
        rel = con.sql(query)
        if fmt == "table" and output is None:
            rel.show(max_rows=max_rows, max_width=200)
            return
        rows = _export(con, rel, fmt, output)
    except duckdb.Error as exc:
        fail(str(exc).splitlines()[0] if str(exc) else type(exc).__name__,
              "check the SQL; `prm-warehouse tables` lists the tables and views")
    if output is not None:
        click.echo(f"wrote {rows} rows to {output}", err=True)


def _require_reads(con: duckdb.DuckDBPyConnection, query: str) -> None:
    """Refuse every statement of ``query`` that could write (DuckDB tells statement types apart)."""
    statements = con.extract_statements(query)
    if not statements:
        fail("no SQL statement in the query (only comments?)", 'pass a query, e.g. "SELECT * FROM problems"')
    for statement in statements:
        explained = _EXPLAIN.match(statement.query) if statement.type == duckdb.StatementType.EXPLAIN else None
        inner = con.extract_statements(explained["inner"]) if explained else [statement]
        refused = [s.type.name for s in inner if s.type not in _READ_STATEMENTS]
        if refused:
            fail(f"{refused[0]} statements are not allowed: prm-warehouse sql only reads",
                  "run a SELECT (or WITH, FROM, DESCRIBE, SHOW, SUMMARIZE); read local files with read_csv() "
                  "or read_parquet()")


def _export(con: duckdb.DuckDBPyConnection, rel: duckdb.DuckDBPyRelation, fmt: str, output: Path | None) -> int:
    """Write the result with DuckDB's own COPY, which streams and knows every DuckDB type; returns rows.
    JSON is strict: NaN and infinities are written as null (warehouse/strict_json.py)."""
    con.register(_RESULT_VIEW, rel)  # a temporary view: nothing is computed until COPY pulls rows
    source = strict_json_source(rel, _RESULT_VIEW) if "json" in _COPY_OPTIONS[fmt] else _RESULT_VIEW
    copy = "COPY {source} TO '{target}' ({options})"
    with _target(output) as target:
        (rows,) = con.execute(copy.format(source=source, target=target.replace("'", "''"),
                                          options=_COPY_OPTIONS[fmt])).fetchone()
    return rows


@contextmanager
def _target(output: Path | None) -> Iterator[str]:
    """A path for COPY: ``output``, or a pipe whose bytes go to stdout through Python (so they interleave
    with everything else the process prints, and test runners that replace sys.stdout see them)."""
    if output is not None:
        yield str(output)
        return
    read_fd, write_fd = os.pipe()
    sys.stdout.flush()  # text printed before goes out before the result's bytes
    stdout = sys.stdout.buffer  # not click.get_binary_stream, which Click 8.5 deprecates
    reader_gone = threading.Event()

    def pump() -> None:
        try:
            with os.fdopen(read_fd, "rb") as pipe:
                while chunk := pipe.read(1 << 16):
                    stdout.write(chunk)
                stdout.flush()
        except BrokenPipeError:  # e.g. `| head`: closing our end makes DuckDB's next write fail, which stops it
            reader_gone.set()

    thread = threading.Thread(target=pump, name="prm-warehouse-stdout", daemon=True)
    thread.start()
    try:
        yield f"/dev/fd/{write_fd}"
    finally:
        os.close(write_fd)  # DuckDB closed its own descriptor; this is the last writer, so pump sees EOF
        thread.join()
        if reader_gone.is_set():  # not an error: the reader has what it wanted; exit without a word
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing left to flush at exit
            sys.exit(0)


@main.command()
@root_option
def tables(root: str | None) -> None:
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
        fail(f"unknown table {table!r}", f"choose one of {', '.join(sorted(TABLES))}")
    sch = TABLES[table]
    click.echo(f"{table} (schema v{sch.metadata[b'schema_version'].decode()}, key: "
               f"{', '.join(PRIMARY_KEYS[table])})")
    for field in sch:
        flags = [] if field.nullable else ["required"]
        if field.name in PARTITION_COLUMNS:
            flags.append("partition")
        click.echo(f"  {field.name:<20} {field.type!s:<24} {' '.join(flags)}")


for _command in (history, maintain, migrate):
    main.add_command(_command)

if __name__ == "__main__":
    main()
