"""Resources: the warehouse (and inbox of new problem files) and the generation backend."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import dagster as dg
from pydantic import PrivateAttr

from assets.config_base import Mirror, derive
from prm.flywheel import FlywheelConfig, LazyBackend
from prm.generation import GenerationBackend, GenerationConfig, make_backend
from prm.models import model_cache_dir, model_version
from warehouse import PROJECT_ROOT, Warehouse, default_root, is_remote

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


class GenerationResource(derive(Mirror(GenerationConfig), base=dg.ConfigurableResource)):
    """The generation backend: the offline vLLM engine or an OpenAI-compatible server; its settings are
    prm.generation.GenerationConfig's fields (``config()``).

    The engine starts on first use and is shared by every asset of the run (the code location uses
    the in-process executor), then closed when the run ends.
    """

    _backend: Any = PrivateAttr(default=None)
    _version: str | None = PrivateAttr(default=None)

    def model_version(self) -> str:
        """The model name plus a digest of its local weights: the ``model`` column of rows it produces.
        An OpenAI-compatible server's model name is used as is: its weights are not on this machine."""
        if self._version is None:
            self._version = model_version(self.model) if self.backend == "vllm" else self.model
        return self._version

    def config(self) -> GenerationConfig:
        return self.to_library()

    def get(self) -> GenerationBackend:
        """The running backend, started now if this run has not started it yet."""
        if self._backend is None:
            self._backend = make_backend(self.config())
        return self._backend

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        if self._backend is not None:
            self._backend.close()
            self._backend = None


class FlywheelResource(derive(Mirror(FlywheelConfig), base=dg.ConfigurableResource)):
    """Settings every round of the flywheel shares (prm.flywheel.FlywheelConfig's fields: ``get()``), and where its
    models live."""

    models_dir: str = ""  # empty: <model cache>/flywheel

    _engine: Any = PrivateAttr(default=None)

    def engine(self, config: GenerationConfig) -> LazyBackend:
        """The run's engine on ``config.model`` (sampling and labeling of a round share it; another model
        closes it first)."""
        if self._engine is not None and self._engine.config != config:
            self.close_engine()
        if self._engine is None:
            self._engine = LazyBackend(config)
        return self._engine

    def close_engine(self) -> None:
        if self._engine is not None:
            self._engine.close()
            self._engine = None

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        self.close_engine()

    def get(self) -> FlywheelConfig:
        return self.to_library()

    def models(self) -> Path:
        return Path(self.models_dir) if self.models_dir else model_cache_dir() / "flywheel"
