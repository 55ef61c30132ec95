"""Options and the error exit shared by the ``prm-warehouse`` commands."""

from __future__ import annotations

import sys

import click

from warehouse.config import ENV_VAR


def fail(what: str, todo: str) -> None:
    click.echo(f"Error: {what} - {todo}", err=True)
    sys.exit(1)


def root_option(func):
    return click.option(
        "--root",
        type=str,
        default=None,
        help=f"Warehouse root, a folder or s3:// URI (default: ${ENV_VAR} or <project>/data/warehouse).",
    )(func)
