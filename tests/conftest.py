"""Shared fixtures: a fresh warehouse per test, the path of the real datasets, and every tiny model
(built by tests/tiny_models.py, once per session)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prm.models import resolve_model
from tests.tiny_models import TinyModels, build_prm
from warehouse import Warehouse

PROJECT_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = PROJECT_ROOT.parent / "shared" / "data"


@pytest.fixture
def wh(tmp_path: Path) -> Warehouse:
    return Warehouse(tmp_path / "warehouse")


@pytest.fixture
def shared_file():
    """``shared_file("gsm8k/test.jsonl")``: a file under ../shared/data, or skip when this machine lacks it."""

    def find(relative: str) -> Path:
        path = SHARED_DATA / relative
        if not path.exists():
            pytest.skip(f"{path} is absent (the real datasets live in ../shared/data, which CI has)")
        return path

    return find


# Small context for engine tests, so a "too long" prompt is cheap to build.
TINY_CONTEXT = 512


@pytest.fixture(scope="session")
def tiny_policy_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The default policy (the shipped checkpoint, or a local rebuild): what the pipeline itself samples."""
    return Path(resolve_model("arith-policy"))


@pytest.fixture(scope="session")
def tiny_context(tiny_policy_dir: Path) -> int:
    """Context length of the tiny policy (the real arith-policy's when that exists)."""
    limit = json.loads((tiny_policy_dir / "config.json").read_text())["max_position_embeddings"]
    return min(int(limit), TINY_CONTEXT)


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory: pytest.TempPathFactory) -> TinyModels:
    """The session's tiny LMs and PRMs (tests/tiny_models.py): ``tiny_models.lm(context)``,
    ``tiny_models.prm(context)``; each context is built once and shared by every test directory."""
    return TinyModels(tmp_path_factory.mktemp("tiny-models"))


@pytest.fixture(scope="session")
def prm_folders(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One tiny random PRM per step-tag convention (tests/tiny_models.py ``build_prm``), keyed by its name."""
    from prm.format import CONVENTIONS

    root = tmp_path_factory.mktemp("prms")
    return {name: build_prm(name, root / name) for name in CONVENTIONS}


@pytest.fixture(scope="session")
def smollm2_backend():
    """One real vLLM engine on SmolLM2-135M-Instruct (converted from the packaged GGUF) for the session."""
    from prm.generation import GenerationConfig, make_backend

    backend = make_backend(GenerationConfig(model="smollm2-135m-instruct", max_model_len=2048, kv_cache_gib=0.5))
    yield backend
    backend.close()


from tests.s3_server import s3_endpoint, s3_root  # noqa: E402,F401 - fixtures: a moto S3 server on 127.0.0.1
