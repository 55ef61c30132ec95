"""``python -m prm.search``: documented, and bad input is one line and exit code 1."""

from __future__ import annotations

from pathlib import Path

import pytest

from prm.search.__main__ import _parser, main


def test_help_has_an_example() -> None:
    assert "Example" in main.__globals__["__doc__"]
    assert "run" in _parser().format_help()


def test_missing_prm_folder_is_one_line_and_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--prm", str(tmp_path / "absent"), "--method", "dvts", "--problems", "1"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("Error: ") and err.count("\n") == 1


def test_bad_width_is_one_line_and_exit_1(tiny_prm: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--prm", str(tiny_prm), "--method", "beam_search", "--n", "0"]) == 1
    assert "n=0" in capsys.readouterr().err


def test_unknown_method_is_refused_by_argparse() -> None:
    with pytest.raises(SystemExit):
        main(["run", "--prm", "x", "--method", "greedy"])
