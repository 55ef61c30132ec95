"""Where the warehouse lives: ``$PRM_DATA_ROOT`` (a folder or ``s3://`` URI) or ``data/warehouse`` in the project."""

from __future__ import annotations

import os
from pathlib import Path

ENV_VAR = "PRM_DATA_ROOT"
PROJECT_ROOT = Path(__file__).resolve().parents[1]  # the checkout: every module that needs it imports it from here


def default_root() -> str:
    """The data root: ``$PRM_DATA_ROOT`` when set (a folder or an object-store URI), else
    ``<project>/data/warehouse`` (git-ignored)."""
    from warehouse.location import normalize

    value = os.environ.get(ENV_VAR)
    return normalize(value) if value else str(PROJECT_ROOT / "data" / "warehouse")
