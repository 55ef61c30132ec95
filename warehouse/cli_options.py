"""Options and the error exit shared by the ``prm-warehouse`` commands."""

from __future__ import annotations

import re
import sys

import click

from warehouse.config import ENV_VAR

# Terminal colour codes: delta-rs puts them in its error texts, which a log file or a pipe shows as garbage.
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def fail(what: str, todo: str) -> None:
    """Print ``Error: <what> - <todo>`` on one line (colour codes and line breaks of ``what`` dropped); exit 1."""
    what = " ".join(_ANSI.sub("", what).split())
    click.echo(f"Error: {what} - {todo}", err=True)
    sys.exit(1)


def root_option(func):
    return click.option(
        "--root",
        type=str,
        default=None,
        help=f"Warehouse root, a folder or s3:// URI (default: ${ENV_VAR} or <project>/data/warehouse).",
    )(func)
