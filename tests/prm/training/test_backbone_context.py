"""A PRM backbone whose context is too small for the data is refused before training, with the counts and the fix
(it used to skip the rows with a WARNING and blame the labels for the one class left)."""

from __future__ import annotations

from pathlib import Path

import pytest

from prm.training import PRMTrainConfig, train_prm
from prm.training.lm_head import MAX_OVERFLOW_SHARE, check_fits_context


def _rows(n: int, good: bool, steps: int, start: int = 0) -> list[dict]:
    return [{"prompt": f"{i} plus 1", "completions": ["ok" if good else "no"] * steps, "labels": [good] * steps,
             "split": "train", "solution_id": f"s{i}"} for i in range(start, start + n)]


def _config(base: Path, head: str) -> PRMTrainConfig:
    return PRMTrainConfig(base_model=str(base), head=head, max_steps=1, batch_size=4, learning_rate=1e-2,
                          warmup_steps=0, logging_steps=1, eval_steps=10, save_steps=10)


@pytest.mark.parametrize("head", ["lm", "classifier"])
def test_long_solutions_over_the_context_are_refused_with_counts(tiny_base: Path, tmp_path: Path, head: str) -> None:
    # 6 short rows of both classes, 4 rows far over the tiny base's 160-token context: 40% would be dropped.
    rows = _rows(3, True, 2) + _rows(3, False, 2, start=3) + _rows(4, True, 60, start=6)
    with pytest.raises(ValueError, match=r"too small for these solutions: 4 of 10 train rows .* 160-token context") \
            as info:
        train_prm(rows, tmp_path / "prm", _config(tiny_base, head))
    assert "prm.base_model" in str(info.value) and not (tmp_path / "prm" / "prm_card.json").exists()


def test_the_overflow_is_named_when_it_takes_a_whole_class(tiny_base: Path, tmp_path: Path) -> None:
    # Every bad step is in a long solution: before, the error said "all step labels are good".
    rows = _rows(9, True, 2) + _rows(1, False, 60, start=9)
    with pytest.raises(ValueError, match="taking every bad step with them") as info:
        train_prm(rows, tmp_path / "prm", _config(tiny_base, "lm"))
    assert "step labels are good" not in str(info.value)


def test_a_few_long_outliers_stay_a_warning() -> None:
    rows = _rows(5, True, 2) + _rows(5, False, 2, start=5)
    kept = rows[:-1]
    assert 1 / len(rows) <= MAX_OVERFLOW_SHARE
    check_fits_context(rows, kept, {"train": 1, "val": 0}, 160, "tiny")  # no error: 1 of 10 dropped, both classes
