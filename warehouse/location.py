"""Where the warehouse lives: a local folder or an object-store URI (``s3://bucket/prefix``).

A root is kept as a string URI; local roots are absolute paths. Object-store credentials come from the
usual AWS variables (``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_REGION``, ``AWS_ENDPOINT_URL``
for S3-compatible stores such as MinIO); delta-rs and pyarrow both read them.
"""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow.fs as pafs

REMOTE_SCHEMES = ("s3://", "s3a://", "gs://", "az://", "abfss://")


def is_remote(root: str | os.PathLike[str]) -> bool:
    """Whether ``root`` is an object-store URI rather than a local folder."""
    return str(root).startswith(REMOTE_SCHEMES)


def normalize(root: str | os.PathLike[str]) -> str:
    """``root`` as the warehouse keeps it: a URI without a trailing slash, or an absolute local path."""
    text = str(root)
    if is_remote(text):
        scheme, _, rest = text.partition("://")
        if not rest.strip("/"):
            raise ValueError(f"warehouse root {text!r} names no bucket; use e.g. s3://my-bucket/prm")
        return f"{scheme}://{rest.rstrip('/')}"
    if "://" in text:
        raise ValueError(f"warehouse root {text!r}: unsupported scheme; use a local folder or one of {REMOTE_SCHEMES}")
    return str(Path(text).expanduser().resolve())


def table_uri(root: str, table: str) -> str:
    """The Delta table of ``table`` under ``root``."""
    return f"{root}/{table}"


def storage_options(root: str) -> dict[str, str] | None:
    """delta-rs storage options for ``root``: plain HTTP allowed when the endpoint is ``http://`` (a local
    S3-compatible server); None for local folders and for stores configured by the environment alone."""
    endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL") or ""
    if is_remote(root) and endpoint.startswith("http://"):
        return {"AWS_ALLOW_HTTP": "true"}
    return None


def filesystem(root: str) -> tuple[pafs.FileSystem, str]:
    """A pyarrow filesystem for small side files under ``root`` (the format marker) and the path in it; pyarrow
    reads the same ``AWS_*`` variables (endpoint included) as delta-rs."""
    if not is_remote(root):
        return pafs.LocalFileSystem(), root
    return pafs.FileSystem.from_uri(root)
