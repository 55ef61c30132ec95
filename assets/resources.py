"""Resources: the warehouse (and inbox of new problem files) and the generation backend."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import dagster as dg
from pydantic import Field, PrivateAttr

from prm.generation import GenerationBackend, GenerationConfig, make_backend
from prm.models import model_version
from warehouse import Warehouse, default_root
from warehouse.config import PROJECT_ROOT
from warehouse.location import is_remote

INBOX_ENV = "PRM_INBOX"


def default_inbox() -> Path:
    """``$PRM_INBOX``, else ``inbox/`` next to a local warehouse root (``data/inbox`` for an object-store root:
    the inbox is a local folder the sensor watches)."""
    value = os.environ.get(INBOX_ENV)
    if value:
        return Path(value).expanduser()
    root = default_root()
    return (PROJECT_ROOT / "data" if is_remote(root) else Path(root).parent) / "inbox"


class WarehouseResource(dg.ConfigurableResource):
    """The Delta warehouse (and its inbox of dropped problem files)."""

    data_root: str = ""  # a folder or s3:// URI; empty: $PRM_DATA_ROOT or <project>/data/warehouse
    inbox: str = ""  # empty: $PRM_INBOX, else <data root>/../inbox (data/inbox for an s3:// root)

    def get(self) -> Warehouse:
        return Warehouse(self.data_root or None)

    def inbox_path(self) -> Path:
        return Path(self.inbox) if self.inbox else default_inbox()


class GenerationResource(dg.ConfigurableResource):
    """The generation backend: the offline vLLM engine or an OpenAI-compatible server.

    The engine starts on first use and is shared by every asset of the run (the code location uses
    the in-process executor), then closed when the run ends.
    """

    backend: str = "vllm"  # "vllm" (engine in a worker process) or "openai" (HTTP server, e.g. vllm serve)
    model: str = "arith-policy"  # registry name, local HF folder, or hub id (with internet)
    base_url: str = "http://127.0.0.1:8000/v1"  # backend="openai" only
    base_urls: list[str] = Field(default_factory=list)  # backend="openai": servers of one model; replaces base_url
    seed: int = 0  # engine seed; requests derive theirs from the asset's seed
    kv_cache_gib: float | None = None  # KV cache; None follows the device: 2 GiB of host RAM on CPU, the GPU's rest
    max_model_len: int = 2048  # question + solution tokens

    _backend: Any = PrivateAttr(default=None)
    _version: str | None = PrivateAttr(default=None)

    def model_version(self) -> str:
        """The model name plus a digest of its local weights: the ``model`` column of rows it produces.
        An OpenAI-compatible server's model name is used as is: its weights are not on this machine."""
        if self._version is None:
            self._version = model_version(self.model) if self.backend == "vllm" else self.model
        return self._version

    def config(self) -> GenerationConfig:
        return GenerationConfig(backend=self.backend, model=self.model, base_url=self.base_url,
                                base_urls=tuple(self.base_urls), seed=self.seed,
                                kv_cache_gib=self.kv_cache_gib, max_model_len=self.max_model_len)

    def get(self) -> GenerationBackend:
        """The running backend, started now if this run has not started it yet."""
        if self._backend is None:
            self._backend = make_backend(self.config())
        return self._backend

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        if self._backend is not None:
            self._backend.close()
            self._backend = None
