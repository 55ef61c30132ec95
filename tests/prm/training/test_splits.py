"""Stratified problem splits: held-out splits get both outcomes where the data has them, train keeps them too."""

from __future__ import annotations

import pytest

from prm.training import TrainingSetConfig
from prm.training.constants import SPLITS
from prm.training.splits import OUTCOMES, stratify

CONFIG = TrainingSetConfig(method="truth", val_share=0.25, test_share=0.35)


def _problems(n: int, wrong: set[int], right: set[int] | None = None) -> list[dict]:
    right = set(range(n)) if right is None else right
    return [{"problem_id": f"p{i:02d}", "n_gold_steps": 2 + i % 3, "has_wrong": i in wrong, "has_right": i in right}
            for i in range(n)]


def _outcomes_per_split(problems: list[dict], config: TrainingSetConfig) -> dict[str, set[str]]:
    splits = stratify(problems, config)
    out: dict[str, set[str]] = {"train": set(), "val": set(), "test": set()}
    for p in problems:
        out[splits(p["problem_id"], p["n_gold_steps"])] |= {o for o in OUTCOMES if p[o]}
    return out


@pytest.mark.parametrize("seed", range(20))
def test_three_wrong_problems_reach_every_split(seed: int) -> None:
    config = TrainingSetConfig(method="truth", val_share=0.25, test_share=0.35, split_seed=seed)
    problems = _problems(24, wrong={3, 11, 17})  # 3 problems with a wrong solution, as on a sparse demo day
    for split, outcomes in _outcomes_per_split(problems, config).items():
        assert outcomes == set(OUTCOMES), (seed, split)


@pytest.mark.parametrize("seed", range(20))
def test_two_wrong_problems_serve_train_and_validation_first(seed: int) -> None:
    config = TrainingSetConfig(method="truth", val_share=0.25, test_share=0.35, split_seed=seed)
    per_split = _outcomes_per_split(_problems(24, wrong={3, 11}), config)
    assert {s for s in SPLITS if "has_wrong" in per_split[s]} == {"train", "val"}


def test_nothing_moves_when_the_hash_split_already_has_both_outcomes() -> None:
    problems = _problems(40, wrong=set(range(0, 40, 2)))
    assert not stratify(problems, CONFIG).moved


@pytest.mark.parametrize("seed", range(10))
def test_a_lone_problem_of_an_outcome_trains(seed: int) -> None:
    config = TrainingSetConfig(method="truth", val_share=0.25, test_share=0.35, split_seed=seed)
    assert stratify(_problems(24, wrong={5}), config)("p05", 2) == "train"


def test_easy_to_hard_keeps_test_as_the_long_problems() -> None:
    config = TrainingSetConfig(method="truth", val_share=0.2, test_share=0.0, train_max_steps=3)
    problems = _problems(30, wrong={1, 4, 7})
    splits = stratify(problems, config)
    assert set(splits.moved.values()) <= {"val"}
    for p in problems:
        assert (splits(p["problem_id"], p["n_gold_steps"]) == "test") == (p["n_gold_steps"] > 3)


def test_the_map_is_deterministic() -> None:
    problems = _problems(24, wrong={2, 9, 20})
    assert stratify(problems, CONFIG).moved == stratify(list(reversed(problems)), CONFIG).moved
