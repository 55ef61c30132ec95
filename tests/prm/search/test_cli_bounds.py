"""``python -m prm.search``: width and problem count are bounded before anything runs, and a broken PRM folder or
an offline hub id is one line and exit code 1, not a traceback (issue 38 item 8)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from prm.search.__main__ import main
from prm.search.config import SearchConfig
from prm.search.run import heldout_problems


def _one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err  # progress bars of model loading may come first, on lines of their own
    assert "Traceback" not in err and err.endswith("\n"), err
    last = err.splitlines()[-1]
    assert last.startswith("Error: "), err
    return last


@pytest.mark.parametrize("argv,match", [
    (["--n", "1024", "--m", "1024"], "at most n=1024, m=64 and n\\*m=4096"),
    (["--n", "100000"], "at most n=1024"),
    (["--m", "65"], "at most n=1024, m=64"),
    (["--n", "256", "--m", "32"], "asked: 8192"),
    (["--problems", "100000000"], "100000000 problems: search at most 10000"),
    (["--problems", "0"], "search at least one problem"),
])


def test_width_and_problem_count_are_bounded(tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str],
                                             match: str) -> None:
    """The PRM folder does not exist: a bound must be checked before anything is loaded or generated."""
    assert main(["run", "--prm", str(tmp_path / "absent"), "--method", "beam_search", "--budget", "1", *argv]) == 1

    assert re.search(match, _one_line_error(capsys))


def test_bounds_hold_in_the_library_too() -> None:
    with pytest.raises(ValueError, match="at most"):
        SearchConfig(n=1024, m=1024)
    assert SearchConfig(n=256, m=4).n == 256  # search-and-learn's widest setting still runs
    with pytest.raises(ValueError, match="search at most 10000"):
        heldout_problems(100_000_000)


def _broken(tiny_prm: Path, tmp_path: Path, kind: str) -> Path:
    folder = shutil.copytree(tiny_prm, tmp_path / kind)
    weights = sorted(folder.glob("*.safetensors"))
    assert weights, "the tiny PRM is saved as safetensors"
    if kind == "no_weights":
        for w in weights:
            w.unlink()
    elif kind == "truncated_safetensors":
        for w in weights:
            w.write_bytes(w.read_bytes()[: w.stat().st_size // 2])
    elif kind == "config_not_json":
        (folder / "config.json").write_text("{oops", encoding="utf-8")
    elif kind == "empty_weights":
        for w in weights:
            w.write_bytes(b"")
    return folder


@pytest.mark.parametrize("kind", ["no_weights", "truncated_safetensors", "config_not_json", "empty_weights"])


def test_a_broken_prm_folder_is_one_line(tiny_prm: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                         kind: str) -> None:
    folder = _broken(tiny_prm, tmp_path, kind)
    assert main(["run", "--prm", str(folder), "--method", "best_of_n", "--n", "1", "--problems", "1"]) == 1
    assert str(folder) in _one_line_error(capsys)


def test_an_offline_hub_id_is_one_line(tiny_prm: Path, capsys: pytest.CaptureFixture[str],
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    argv = ["run", "--prm", str(tiny_prm), "--policy", "no-such-org/no-such-model", "--method", "best_of_n",
            "--n", "1", "--problems", "1"]
    assert main(argv) == 1
    assert "'no-such-org/no-such-model' is not in the local Hugging Face cache" in _one_line_error(capsys)
