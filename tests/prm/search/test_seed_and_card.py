"""``python -m prm.search``: a seed no engine accepts and a PRM card that is not a JSON object are each one line
naming the seed or the file, before any model loads (issue 53 item 5: ``--seed -1`` read "vLLM could not load
model", a list-valued card crashed with a traceback)."""

from __future__ import annotations

from pathlib import Path

import pytest

from prm.search import SearchConfig
from prm.search.__main__ import main
from prm.search.compare import compare_at_budgets
from prm.training import CARD_FILE


def _one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.endswith("\n"), err
    assert len(err.splitlines()) == 1, err
    assert err.startswith("Error: "), err
    return err.strip()


@pytest.mark.parametrize("seed", ["-1", str(2**70)])
def test_a_seed_out_of_range_is_named_before_anything_loads(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                            seed: str) -> None:
    """The PRM folder does not exist: the seed must be refused before it is looked at."""
    argv = ["run", "--prm", str(tmp_path / "absent"), "--method", "best_of_n", "--seed", seed]
    assert main(argv) == 1
    line = _one_line_error(capsys)
    assert f"seed={seed} must be in [0, 4294967295]" in line and "could not load" not in line


@pytest.mark.parametrize(("text", "kind"), [("[1, 2]", "an array"), ("7", "a number"), ('"prm"', "a string"),
                                            ("{oops", "not JSON")])
def test_a_card_that_is_not_an_object_is_one_line_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                            text: str, kind: str) -> None:
    card = tmp_path / CARD_FILE
    card.write_text(text, encoding="utf-8")
    assert main(["run", "--prm", str(tmp_path), "--method", "best_of_n", "--n", "1", "--problems", "1"]) == 1
    line = _one_line_error(capsys)
    assert f"Error: {card}: {kind}" in line and "retrain with train_prm" in line


def test_the_library_refuses_the_seed_and_a_zero_width_too() -> None:
    with pytest.raises(ValueError, match=r"seed=-1 must be in \[0, 4294967295\]"):
        SearchConfig(seed=-1)
    # backend and scorer are never touched: both are refused before the pilot samples anything
    with pytest.raises(ValueError, match=r"m=0 must be in \[1, 64\]"):
        compare_at_budgets(["p"], None, None, [100], [0], m=0)
    with pytest.raises(ValueError, match=r"seed=1180591620717411303424 must be in"):
        compare_at_budgets(["p"], None, None, [100], [2**70])
