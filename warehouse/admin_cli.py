"""``prm-warehouse history | maintain | migrate``: the commands that look at or change table storage."""

from __future__ import annotations

import datetime as dt
import json
import sys

import click

from warehouse.cli_options import fail, root_option
from warehouse.config import default_root
from warehouse.constants import VACUUM_RETENTION_HOURS
from warehouse.maintenance import SAFE_RETENTION_HOURS, UnsafeRetention, check_retention
from warehouse.maintenance import maintain as run_maintenance
from warehouse.migrate import MigrationError
from warehouse.migrate import migrate as run_migration
from warehouse.schemas import TABLES
from warehouse.store import Warehouse
from warehouse.version import SchemaVersionError


def _warehouse(root: str | None) -> Warehouse:
    try:
        return Warehouse(root or default_root())
    except SchemaVersionError as exc:
        fail(str(exc), "see the message for the command to run")
        raise  # unreachable: fail exits


@click.command()
@click.argument("table")
@root_option
@click.option("--limit", type=int, default=20, show_default=True, help="Newest commits shown.")
def history(table: str, root: str | None, limit: int) -> None:
    """List TABLE's versions, newest first: when, what, which run and writer.

    Example: prm-warehouse history step_labels --limit 5
    """
    if table not in TABLES:
        fail(f"unknown table {table!r}", f"choose one of {', '.join(sorted(TABLES))}")
    commits = _warehouse(root).history(table, limit)
    if not commits:
        click.echo(f"{table}: never written")
    for c in commits:
        when = dt.datetime.fromtimestamp(c.get("timestamp", 0) / 1000, dt.UTC).strftime("%Y-%m-%d %H:%M:%S")
        op = c.get("prm_operation") or c.get("operation", "?")
        who = f"writer={c.get('writer', '-')}  run={c.get('run_id', '-')}"
        click.echo(f"v{c.get('version', '?'):<6} {when}  {op:<8} {who}")


@click.command()
@root_option
@click.option("--retention-hours", type=int, default=VACUUM_RETENTION_HOURS, show_default=True,
              help="Vacuum keeps files removed less than this long ago (time travel reaches that far back).")
@click.option("--force", is_flag=True,
              help=f"Allow a retention below {SAFE_RETENTION_HOURS} h (readers of recent versions may fail).")
@click.option("--dry-run", is_flag=True, help="Change nothing; count the files vacuum would delete.")
@click.option("--table", "tables", multiple=True, help="Only these tables (repeatable; default all).")
def maintain(root: str | None, retention_hours: int, force: bool, dry_run: bool, tables: tuple[str, ...]) -> None:
    """Compact small files, vacuum unreferenced ones and checkpoint the log of every table (JSON lines).

    Even with --force, a file no commit references yet is kept until it is older than the safe floor: it may
    belong to a write in flight.

    Example: prm-warehouse maintain --dry-run
    """
    unknown = sorted(set(tables) - set(TABLES))
    if unknown:
        fail(f"unknown table(s) {unknown}", f"choose from {', '.join(sorted(TABLES))}")
    try:
        check_retention(retention_hours, force)
    except UnsafeRetention as exc:
        fail(f"--retention-hours {retention_hours}: {exc.what}",
             f"pass --retention-hours {SAFE_RETENTION_HOURS} or more, or add --force to accept the risk")
    except ValueError as exc:
        fail(f"--retention-hours {retention_hours}: {exc}", "pass a number of hours")
    for done in run_maintenance(_warehouse(root), retention_hours=retention_hours, dry_run=dry_run, force=force,
                                tables=list(tables) or None):
        click.echo(json.dumps(done.as_row()))


@click.command()
@root_option
@click.option("--to", default=None, help="Write the Delta warehouse here (a folder or s3:// URI) instead of in place.")
@click.option("--skip-invalid", is_flag=True,
              help="Leave out old files that do not validate against the current schema (listed; kept in the backup).")
def migrate(root: str | None, to: str | None, skip_invalid: bool) -> None:
    """Convert a warehouse of the earlier Parquet-folder layout into Delta tables.

    In place, the old folder is kept as <root>.parquet-backup-<time>.

    Example: prm-warehouse migrate --root data/warehouse
    """
    try:
        done = run_migration(root or default_root(), to, skip_invalid)
    except MigrationError as exc:
        fail(str(exc), "see `prm-warehouse migrate --help`")
        return
    for why in done.skipped:
        click.echo(f"skipped {why}", err=True)
    for table, rows in sorted(done.rows.items()):
        click.echo(f"{table:<16} {rows:>10,} rows")
    click.echo(f"Delta warehouse at {done.root}" + (f"; old files kept at {done.backup}" if done.backup else ""),
               err=not sys.stdout.isatty())
