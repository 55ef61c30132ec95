"""The search_comparison asset materialized in-process: the shipped policy on a real vLLM engine, a real tiny PRM,
every method at one budget, the table (with intervals) and the plot in metadata.

The policy is the session's vLLM server (``tiny_openai_server``, tests/prm/conftest.py) behind the generation
resource's OpenAI-compatible backend: one engine for both runs instead of one started per run. Search through the
offline engine is tests/prm/search/test_backend.py's."""

from __future__ import annotations

import shutil
from pathlib import Path

import dagster as dg
import pytest

import assets.search as search_asset
from assets.resources import GenerationResource, WarehouseResource
from prm.models.constants import MODEL_CACHE_ENV
from prm.search import SEARCH_METHODS

pytestmark = pytest.mark.slow

TINY = {"problems": 2, "n_ops": [2], "budgets": [160], "seeds": [0], "m": 2}


@pytest.fixture
def prm_cache(tmp_path: Path, tiny_prm: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A model cache holding the tiny PRM where prm_model saves it."""
    shutil.copytree(tiny_prm, tmp_path / "prm" / "model")
    monkeypatch.setenv(MODEL_CACHE_ENV, str(tmp_path))  # PRMArtifacts.default() lives under the model cache
    return tmp_path / "prm"


@pytest.fixture
def generation(tiny_openai_server) -> GenerationResource:
    """The generation resource on the session's server of the shipped policy."""
    return GenerationResource(backend="openai", base_url=tiny_openai_server.base_url, max_concurrency=4)


def test_search_comparison_reports_every_method_with_an_interval(prm_cache: Path,
                                                                 generation: GenerationResource) -> None:
    warehouse = WarehouseResource(data_root=str(prm_cache / "warehouse"))  # unread: generated problems
    result = dg.materialize([search_asset.search_comparison, search_asset.search_comparison_complete],
                            resources={"generation": generation, "warehouse": warehouse},
                            run_config={"ops": {"search_comparison": {"config": TINY}}})
    assert result.success
    assert [e.passed for e in result.get_asset_check_evaluations()] == [True]
    meta = result.asset_materializations_for_node("search_comparison")[0].metadata
    table = meta["comparison"].value
    assert table.count("\n") == 1 + len(SEARCH_METHODS)  # header, rule, one row per method at the one budget
    assert all(f"| {method} |" in table for method in SEARCH_METHODS) and "[" in table
    assert Path(meta["plot"].value).is_file() and Path(meta["plot"].value).parent == prm_cache
    assert Path(meta["plot_total_tokens"].value).is_file() and "prm_tokens" in table.splitlines()[0]
    assert meta["prm_tokens_total"].value > 0 and meta["prm_scoring"].value == "prefix cache"  # transformers head


def test_search_comparison_without_a_prm_says_what_to_materialize(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv(MODEL_CACHE_ENV, str(tmp_path))
    result = dg.materialize([search_asset.search_comparison], raise_on_error=False,
                            resources={"generation": GenerationResource(), "warehouse": WarehouseResource()},
                            run_config={"ops": {"search_comparison": {"config": TINY}}})
    assert not result.success
    assert "materialize prm_model first" in result.get_step_failure_events()[0].step_failure_data.error.message


def test_search_comparison_on_a_sources_held_out_gold_answer_problems(prm_cache: Path, generation: GenerationResource,
                                                                      tmp_path: Path) -> None:
    from prm.training import TrainingSetConfig, build_training_set
    from prm.training.artifacts import PRMArtifacts
    from tests.prm.evaluation.gsm8k_like import fill_gsm8k_like
    from warehouse import Warehouse

    root = tmp_path / "warehouse"
    fill_gsm8k_like(Warehouse(root))  # GSM8K-shaped: gold answers, no arithmetic truth
    data = TrainingSetConfig(method="mc", val_share=0.25, test_share=0.35)
    build_training_set(str(root), data).save(PRMArtifacts.default().training_set)  # the PRM's split
    result = dg.materialize([search_asset.search_comparison], raise_on_error=False,
                            resources={"generation": generation, "warehouse": WarehouseResource(data_root=str(root))},
                            run_config={"ops": {"search_comparison": {"config": {**TINY, "source": "gsm8k"}}}})
    assert result.success
    table = result.asset_materializations_for_node("search_comparison")[0].metadata["comparison"].value
    assert all(f"| {method} |" in table for method in SEARCH_METHODS)
    missing = dg.materialize([search_asset.search_comparison], raise_on_error=False,
                             resources={"generation": generation, "warehouse": WarehouseResource(data_root=str(root))},
                             run_config={"ops": {"search_comparison": {"config": {**TINY, "source": "math"}}}})
    assert "from source 'math'" in missing.get_step_failure_events()[0].step_failure_data.error.message
