"""A persistent DAGSTER_HOME inside the project, so run history and schedules survive restarts."""

from __future__ import annotations

import os
from pathlib import Path

import yaml

from warehouse import PROJECT_ROOT

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

# For `dagster dev` (its daemon runs the monitor). The default launcher cannot check a run's process, so a
# killed run stays STARTED: pipelines.recovery.dead_run_sensor fails it and frees its slots, and this frees
# the slots of runs that ended still holding them (a run marked failed by hand keeps its slot otherwise).
RUN_MONITORING_YAML = """\
run_monitoring:
  enabled: true
  start_timeout_seconds: 300  # a run worker loads the code location (torch, vLLM) before it reports STARTED
  cancel_timeout_seconds: 180
  max_resume_run_attempts: 0  # the default run launcher cannot resume a run in a new process
  poll_interval_seconds: 60
  free_slots_after_run_end_seconds: 60
"""


def ensure_dagster_home(home: Path | None = None) -> Path:
    """Set ``$DAGSTER_HOME`` (default ``<project>/.dagster_home``) and give it a dagster.yaml."""
    home = Path(home or os.environ.get("DAGSTER_HOME") or PROJECT_ROOT / ".dagster_home").resolve()
    home.mkdir(parents=True, exist_ok=True)
    config = home / "dagster.yaml"
    if not config.exists():
        config.write_text(DAGSTER_YAML + RUN_MONITORING_YAML)
    elif "run_monitoring" not in (yaml.safe_load(config.read_text()) or {}):
        # A home made before run monitoring was on gets the block once; the user's own lines stay as they are.
        with config.open("a") as f:
            f.write("# Added by prm-pipeline (pipelines/instance.py): dead runs must not hold pool slots.\n"
                    + RUN_MONITORING_YAML)
    os.environ["DAGSTER_HOME"] = str(home)
    return home
