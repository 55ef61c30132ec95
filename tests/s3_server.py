"""A real S3-compatible server (moto in server mode) on 127.0.0.1, started once per test session."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator

import httpx
import pytest

CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": "us-east-1"}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    """The URL of a moto S3 server running for this session (skips when moto is not installed)."""
    pytest.importorskip("moto", reason="moto[server] is a dev dependency: `make venv` installs it")
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                httpx.get(url, timeout=1)
                break
            except httpx.HTTPError:
                assert proc.poll() is None, "moto server exited at start"
                time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture
def s3_root(s3_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """``s3://<fresh bucket>/warehouse`` on the session's server, with the AWS variables set for this test."""
    import boto3

    for key, value in {**CREDENTIALS, "AWS_ENDPOINT_URL": s3_endpoint}.items():
        monkeypatch.setenv(key, value)
    bucket = f"prm-{uuid.uuid4().hex[:12]}"
    boto3.client("s3", endpoint_url=s3_endpoint, **{k.lower(): v for k, v in CREDENTIALS.items()
                                                      if k != "AWS_REGION"}, region_name="us-east-1"
                 ).create_bucket(Bucket=bucket)
    return f"s3://{bucket}/warehouse"


def env_for(endpoint: str) -> dict[str, str]:
    """The environment a subprocess needs to reach the server."""
    return {**os.environ, **CREDENTIALS, "AWS_ENDPOINT_URL": endpoint}
