"""End to end through the real UI server: `dagster dev` on 127.0.0.1, GraphQL as the UI's buttons use it,
and headless Chromium rendering the asset graph."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from assets.partitions import partition_key
from pipelines.instance import ensure_dagster_home
from warehouse import Warehouse, connect

pytestmark = [pytest.mark.ui, pytest.mark.slow]  # starts `dagster dev` (minutes): deselected with -m 'not slow'
PROJECT = Path(__file__).resolve().parents[2]
ARTIFACTS = PROJECT / "test-artifacts"
STARTUP_TIMEOUT_S = 240
RUN_TIMEOUT_S = 180
REPO = "__repository__"
CHECKS = ("problems_schema_conforms", "problems_ids_unique", "problems_gold_answers")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class DagsterDev:
    """A `dagster dev` process and a GraphQL client for it."""

    def __init__(self, url: str, root: Path, inbox: Path, proc: subprocess.Popen) -> None:
        self.url, self.root, self.inbox, self.proc = url, root, inbox, proc

    def graphql(self, query: str, variables: dict | None = None) -> dict:
        body = json.dumps({"query": query, "variables": variables or {}}).encode()
        req = urllib.request.Request(f"{self.url}/graphql", data=body, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=60) as resp:
            payload = json.loads(resp.read())
        assert "errors" not in payload, payload["errors"]
        return payload["data"]

    def location(self) -> str:
        query = "{ repositoriesOrError { ... on RepositoryConnection { nodes { name location { name } } } } }"
        data = self.graphql(query)
        return next(n["location"]["name"] for n in data["repositoriesOrError"]["nodes"] if n["name"] == REPO)


@pytest.fixture(scope="module")
def dagster_dev(tmp_path_factory) -> Iterator[DagsterDev]:
    tmp = tmp_path_factory.mktemp("ui")
    saved = os.environ.get("DAGSTER_HOME")
    home = ensure_dagster_home(tmp / "dagster_home")
    if saved is None:
        os.environ.pop("DAGSTER_HOME")
    else:
        os.environ["DAGSTER_HOME"] = saved
    port = _free_port()
    env = {**os.environ, "DAGSTER_HOME": str(home), "PRM_DATA_ROOT": str(tmp / "warehouse"),
           "PRM_INBOX": str(tmp / "inbox")}
    (tmp / "inbox").mkdir()
    log = open(tmp / "dagster_dev.log", "w")  # noqa: SIM115 - closed in teardown
    proc = subprocess.Popen(
        [sys.executable, "-m", "dagster", "dev", "-m", "pipelines.definitions", "-h", "127.0.0.1", "-p", str(port)],
        cwd=PROJECT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while True:
        try:
            with urllib.request.urlopen(f"{url}/server_info", timeout=5):
                break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                _stop(proc)
                pytest.fail(f"dagster dev did not come up: {(tmp / 'dagster_dev.log').read_text()[-3000:]}")
            time.sleep(1)
    yield DagsterDev(url, tmp / "warehouse", tmp / "inbox", proc)
    _stop(proc)
    log.close()


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)


ADD_PARTITION = """
mutation($name: String!, $key: String!, $repo: RepositorySelector!) {
  addDynamicPartition(partitionsDefName: $name, partitionKey: $key, repositorySelector: $repo) {
    __typename ... on PythonError { message }
  }
}"""

LAUNCH = """
mutation($params: ExecutionParams!) {
  launchPipelineExecution(executionParams: $params) {
    __typename
    ... on LaunchRunSuccess { run { runId } }
    ... on PythonError { message }
    ... on RunConfigValidationInvalid { errors { message } }
  }
}"""

RUN_STATUS = "query($id: ID!) { runOrError(runId: $id) { __typename ... on Run { status } } }"

CHECK_RESULTS = """
query($id: ID!) {
  logsForRun(runId: $id) {
    ... on EventConnection {
      events { __typename ... on AssetCheckEvaluationEvent { evaluation { checkName success } } }
    }
  }
}"""

RUN_ERRORS = """
query($id: ID!) {
  logsForRun(runId: $id) {
    ... on EventConnection { events { __typename ... on ExecutionStepFailureEvent { stepKey error { message } } } }
  }
}"""


def _materialize(dev: DagsterDev, day: str, source: str) -> tuple[str, str]:
    """Launch what the UI's Materialize button launches for one (day, source) partition; wait for the end."""
    location = dev.location()
    repo = {"repositoryLocationName": location, "repositoryName": REPO}
    added = dev.graphql(ADD_PARTITION, {"name": "source", "key": source, "repo": repo})
    outcome = added["addDynamicPartition"]["__typename"]
    assert outcome in {"AddDynamicPartitionSuccess", "DuplicateDynamicPartitionError"}, added
    key = str(partition_key(day, source))
    params = {
        "selector": {**repo, "pipelineName": "__ASSET_JOB", "assetSelection": [{"path": ["problems"]}],
                     "assetCheckSelection": [{"assetKey": {"path": ["problems"]}, "name": name} for name in CHECKS]},
        "mode": "default",
        "executionMetadata": {"tags": [{"key": "dagster/partition", "value": key},
                                       {"key": "dagster/partition/day", "value": day},
                                       {"key": "dagster/partition/source", "value": source}]},
    }
    launched = dev.graphql(LAUNCH, {"params": params})["launchPipelineExecution"]
    assert launched["__typename"] == "LaunchRunSuccess", launched
    run_id = launched["run"]["runId"]
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while time.monotonic() < deadline:
        status = dev.graphql(RUN_STATUS, {"id": run_id})["runOrError"]["status"]
        if status in {"SUCCESS", "FAILURE", "CANCELED"}:
            return run_id, status
        time.sleep(1)
    pytest.fail(f"run {run_id} did not finish in {RUN_TIMEOUT_S}s")


def test_materialize_button_path_writes_rows(dagster_dev: DagsterDev) -> None:
    day = dt.datetime.now(dt.UTC).date().isoformat()
    run_id, status = _materialize(dagster_dev, day, "arith")
    assert status == "SUCCESS"
    events = dagster_dev.graphql(CHECK_RESULTS, {"id": run_id})["logsForRun"]["events"]
    checks = {e["evaluation"]["checkName"]: e["evaluation"]["success"] for e in events if "evaluation" in e}
    assert checks == dict.fromkeys(CHECKS, True)
    rows = connect(dagster_dev.root).execute(
        "SELECT source, day, count(*) FROM problems GROUP BY ALL").fetchall()
    assert rows == [("arith", day, 24)]


def test_a_failed_run_shows_a_readable_message(dagster_dev: DagsterDev) -> None:
    (dagster_dev.inbox / "broken.jsonl").write_text(json.dumps({"question": "2+2?"}) + "\n")
    run_id, status = _materialize(dagster_dev, "2026-11-20", "broken")
    assert status == "FAILURE"
    events = dagster_dev.graphql(RUN_ERRORS, {"id": run_id})["logsForRun"]["events"]
    messages = [e["error"]["message"] for e in events if e["__typename"] == "ExecutionStepFailureEvent"]
    assert any("cannot load problems of source 'broken' for 2026-11-20" in m for m in messages), messages
    assert Warehouse(dagster_dev.root).files("problems"), "the earlier partition must be intact"


def test_browser_shows_the_asset_graph(dagster_dev: DagsterDev) -> None:
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.skip("Debian's chromium is not installed (make test installs it where apt-get is allowed)")
    ARTIFACTS.mkdir(exist_ok=True)
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={ARTIFACTS / 'chromium-profile'}", "--window-size=1600,1000",
             "--virtual-time-budget=25000"]
    page = f"{dagster_dev.url}/asset-groups"
    dom = subprocess.run([chromium, *flags, "--dump-dom", page], capture_output=True, text=True, timeout=120)
    shot = ARTIFACTS / "asset-graph.png"
    subprocess.run([chromium, *flags, f"--screenshot={shot}", page], capture_output=True, timeout=120)
    assert "problems" in dom.stdout, dom.stdout[-2000:]
    assert shot.exists() and shot.stat().st_size > 10_000
