"""RL problems from the warehouse: a pool read back with exact truth, split into held-out and training problems."""

from __future__ import annotations

from pathlib import Path

import pytest

from prm.rl import RLRunConfig
from prm.rl.data import split_pool, warehouse_problems
from prm.tasks import ArithmeticSourceConfig, generate_arithmetic
from warehouse import Warehouse

CONFIG = RLRunConfig(train_ops=(4,), anchor_ops=(2,), eval_ops=(2, 4), eval_problems=3, steps=5, batch_size=8,
                     num_generations=4)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    wh = Warehouse(tmp_path / "warehouse")
    for source, seed in (("arith", 0), ("other", 1)):
        records = generate_arithmetic(ArithmeticSourceConfig(n_ops=(2, 4), per_level=4), seed=seed)
        wh.write("problems", [r.to_row() for r in records], source=source, day="2026-11-20", run_id="p",
                 writer="problems")
    return tmp_path / "warehouse"


def test_the_pool_is_every_source_or_one_with_the_generator_truth(root: Path) -> None:
    every, arith = warehouse_problems(root), warehouse_problems(root, "arith")
    assert len(arith) == 8 and len(every) == 16 and {p.problem_id for p in arith} < {p.problem_id for p in every}
    by_id = {r.problem_id: r for r in generate_arithmetic(ArithmeticSourceConfig(n_ops=(2, 4), per_level=4), 0)}
    assert all(p.answer == int(by_id[p.problem_id].gold_answer) and p.n_ops == by_id[p.problem_id].n_gold_steps
               for p in arith)
    with pytest.raises(ValueError, match="no nope problems with a gold answer"):
        warehouse_problems(root, "nope")


def test_held_out_problems_are_never_trained_on_and_training_cycles_the_rest(root: Path) -> None:
    held, train = split_pool(warehouse_problems(root, "arith"), CONFIG)
    assert sorted(p.n_ops for p in held) == [2, 2, 2, 4, 4, 4]  # eval_problems per difficulty
    assert not {p.problem_id for p in held} & {p.problem_id for p in train}
    assert len(train) == CONFIG.steps * CONFIG.prompts_per_step  # 10 prompts from 2 problems: cycled
    assert sorted(p.n_ops for p in train) == [2] * 5 + [4] * 5  # anchor_share of them from anchor_ops
    assert split_pool(warehouse_problems(root, "arith"), CONFIG) == (held, train)  # seeded, so reproducible


def test_a_pool_without_a_difficulty_names_what_it_holds(root: Path) -> None:
    with pytest.raises(ValueError, match=r"hold none with \[8\] operations \(they hold \[2, 4\]\)"):
        split_pool(warehouse_problems(root), RLRunConfig(train_ops=(8,), anchor_ops=(2,), eval_ops=(2, 8)))
