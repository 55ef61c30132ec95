"""A persistent DAGSTER_HOME inside the project, so run history and schedules survive restarts."""

from __future__ import annotations

import os
from pathlib import Path

from warehouse.config import PROJECT_ROOT

# Engine- and GPU-bound assets declare pool="engine"; one such step runs at a time.
DAGSTER_YAML = """\
# Written by prm-pipeline (pipelines/instance.py); edit freely, it is not overwritten.
concurrency:
  pools:
    default_limit: 1
telemetry:
  enabled: false
nux:
  enabled: false  # no newsletter sign-up modal over the asset graph
"""


def ensure_dagster_home(home: Path | None = None) -> Path:
    """Set ``$DAGSTER_HOME`` (default ``<project>/.dagster_home``) and give it a dagster.yaml."""
    home = Path(home or os.environ.get("DAGSTER_HOME") or PROJECT_ROOT / ".dagster_home").resolve()
    home.mkdir(parents=True, exist_ok=True)
    config = home / "dagster.yaml"
    if not config.exists():
        config.write_text(DAGSTER_YAML)
    os.environ["DAGSTER_HOME"] = str(home)
    return home
