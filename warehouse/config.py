"""Where the warehouse lives: ``$PRM_DATA_ROOT`` or ``data/warehouse`` inside the project."""

from __future__ import annotations

import os
from pathlib import Path

ENV_VAR = "PRM_DATA_ROOT"
PROJECT_ROOT = Path(__file__).resolve().parents[1]


def default_root() -> Path:
    """The data root: ``$PRM_DATA_ROOT`` when set, else ``<project>/data/warehouse`` (git-ignored)."""
    value = os.environ.get(ENV_VAR)
    return Path(value).expanduser() if value else PROJECT_ROOT / "data" / "warehouse"
