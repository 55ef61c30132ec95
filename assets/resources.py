"""Resources: the warehouse (and inbox of new problem files) and the generation backend."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import dagster as dg
from pydantic import Field, PrivateAttr

from prm.flywheel import FlywheelConfig, LazyBackend
from prm.generation import ENGINE_STARTUP_TIMEOUT_S, GenerationBackend, GenerationConfig, make_backend
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
    # backend="vllm": seconds the engine may take to start before a clear error; raise it on a loaded machine
    startup_timeout_s: float = ENGINE_STARTUP_TIMEOUT_S

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
                                kv_cache_gib=self.kv_cache_gib, max_model_len=self.max_model_len,
                                startup_timeout_s=self.startup_timeout_s)

    def get(self) -> GenerationBackend:
        """The running backend, started now if this run has not started it yet."""
        if self._backend is None:
            self._backend = make_backend(self.config())
        return self._backend

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        if self._backend is not None:
            self._backend.close()
            self._backend = None


_FW = FlywheelConfig()  # the library's defaults, which the resource below starts from


class FlywheelResource(dg.ConfigurableResource):
    """Settings every round of the flywheel shares (prm.flywheel.FlywheelConfig), and where its models live."""

    n_ops: list[int] = list(_FW.n_ops)  # difficulties of each round's fresh problems
    per_level: int = _FW.per_level  # problems per difficulty and round
    n_samples: int = _FW.n_samples  # solutions per problem, from the round's policy
    label_method: str = _FW.label_method  # omegaprm | mc | mc_early_stop: rollouts from the round's policy
    label_rollouts: int = _FW.label_rollouts
    window: int | None = _FW.window  # rounds of labels the PRM trains on; None = every round so far
    warm_start: bool = _FW.warm_start  # start each PRM from the previous round's
    prm_steps: int = _FW.prm_steps
    arm: str = _FW.arm  # the RL reward (prm.rl.ARMS)
    rl_steps: int = _FW.rl_steps  # GRPO steps per round
    rl_batch_size: int = _FW.rl_batch_size
    num_generations: int = _FW.num_generations
    eval_problems: int = _FW.eval_problems  # held-out problems per difficulty, the same every round
    eval_samples: int = _FW.eval_samples
    prm_tolerance: float = _FW.prm_tolerance  # blocking: new PRM F1 >= previous - this, on the round's samples
    collapse_tolerance: float = _FW.collapse_tolerance  # blocking: held-out accuracy falls at most this much
    hacking_band: float = _FW.hacking_band  # warning: steps and length per completion within +-this of round 0
    seed: int = _FW.seed
    models_dir: str = ""  # empty: <model cache>/flywheel
    policy: str = _FW.policy  # round 0's policy; later rounds start from the last round's RL checkpoint

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
        names = FlywheelConfig.__dataclass_fields__
        return FlywheelConfig(**{k: v for k, v in self.__dict__.items() if k in names})

    def models(self) -> Path:
        return Path(self.models_dir) if self.models_dir else model_cache_dir() / "flywheel"
