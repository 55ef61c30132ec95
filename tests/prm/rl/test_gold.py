"""RL on problems known only by their gold answer (GSM8K-shaped): the pool, the held-out table without step truth,
and the rl_run asset end to end on the tiny models; generated arithmetic keeps its exact truth."""

from __future__ import annotations

import shutil
from pathlib import Path

import dagster as dg
import pytest

import assets.rl as rl_asset
from assets.resources import WarehouseResource
from prm.models.constants import MODEL_CACHE_ENV
from prm.rl import RLRunConfig
from prm.rl.data import dataset_rows, split_pool, warehouse_problems
from prm.rl.gold import GoldProblem, score_heldout
from prm.tasks import ArithmeticSourceConfig, generate_arithmetic
from prm.tasks.arithmetic import ArithmeticProblem
from tests.prm.evaluation.gsm8k_like import N_PROBLEMS, fill_gsm8k_like
from warehouse import Warehouse

CONFIG = RLRunConfig(train_ops=(2,), anchor_ops=(2,), eval_ops=(2,), eval_problems=4, steps=2, batch_size=8,
                     num_generations=4)


def test_a_gold_answer_pool_is_read_and_split(wh: Warehouse) -> None:
    fill_gsm8k_like(wh)
    records = generate_arithmetic(ArithmeticSourceConfig(n_ops=(2,), per_level=2), seed=0)
    wh.write("problems", [r.to_row() for r in records], source="arith", day="2026-11-26")
    pool = warehouse_problems(wh.root, "gsm8k")
    assert len(pool) == N_PROBLEMS and all(isinstance(p, GoldProblem) for p in pool)
    assert {p.n_ops for p in pool} == {2} and pool[0].answer == "10"
    every = warehouse_problems(wh.root)
    assert sum(isinstance(p, ArithmeticProblem) for p in every) == 2  # arithmetic keeps its exact truth
    held, train = split_pool(pool, CONFIG)
    assert len(held) == 4 and not {p.problem_id for p in held} & {p.problem_id for p in train}

    class Plain:
        chat_template = None

    row = dataset_rows([pool[0]], Plain())[0]
    assert row["answer"] == "10" and row["question"] == pool[0].question


def test_the_held_out_table_grades_answers_and_leaves_step_error_unknown() -> None:
    problems = [GoldProblem("a", "q", "18", 2, "x"), GoldProblem("b", "q", "1/2", 3, "y")]
    samples = [["He pays.\nThe answer is $18$", "The answer is 17"], ["Half.\nThe answer is 0.5", "\\boxed{1/2}"]]
    table = score_heldout(problems, samples)
    assert table.row(0).answer_accuracy == 0.75 and table.row(0).step_error_rate is None
    assert (table.row(2).answer_accuracy, table.row(3).answer_accuracy) == (0.5, 1.0)
    assert table.problem_accuracy == (0.5, 1.0) and table.row(0).mixed_share == 0.5
    arith = generate_arithmetic(ArithmeticSourceConfig(n_ops=(2,), per_level=1), seed=0)
    from prm.datagen.truth import arithmetic_problem

    p = arithmetic_problem(arith[0].to_row())
    assert score_heldout([p], [[p.gold_solution()]]).row(0).step_error_rate == 0.0  # exact truth: a number


@pytest.fixture
def cache(tmp_path: Path, tiny_prm: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copytree(tiny_prm, tmp_path / "prm" / "model")
    monkeypatch.setenv(MODEL_CACHE_ENV, str(tmp_path))
    return tmp_path


def test_rl_run_trains_on_gold_answer_problems(cache: Path, tiny_lm: Path, tmp_path: Path) -> None:
    fill_gsm8k_like(Warehouse(tmp_path / "warehouse"))
    resource = WarehouseResource(data_root=str(tmp_path / "warehouse"))
    config = {"policy": str(tiny_lm), "source": "gsm8k", "arms": ["outcome", "prm_min"], "steps": 2, "batch_size": 4,
              "num_generations": 2, "train_ops": [2], "anchor_ops": [2], "eval_ops": [2], "eval_problems": 2,
              "eval_samples": 1}
    result = dg.materialize([rl_asset.rl_run], resources={"warehouse": resource},
                            run_config={"ops": {"rl_run": {"config": config}}})
    assert result.success
    rows = Warehouse(tmp_path / "warehouse").read("rl_metrics").to_pylist()
    metrics = {r["metric"] for r in rows}
    assert {"eval/answer_accuracy", "eval/mean_steps", "train/reward"} <= metrics
    assert not any(m.startswith("eval/step_error_rate") for m in metrics)  # unknown without step truth, not 0
    assert {r["arm"] for r in rows} == {"outcome", "prm_min"}
