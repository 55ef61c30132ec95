"""benchmarks/search.py refuses a width, seed or problem count no run can use at argument parsing, in one line:
``--m 0`` once divided by zero after the engine had started (issue 53 item 5)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "search.py"


def _load_script():
    spec = importlib.util.spec_from_file_location("search_benchmark_under_test", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_args = _load_script()._args


@pytest.mark.parametrize(("argv", "reason"), [
    (["--m", "0"], "--m=0 must be in [1, 64]"),
    (["--m", "-3"], "--m=-3 must be in [1, 64]"),
    (["--m", "65"], "--m=65 must be in [1, 64]"),
    (["--m", "two"], "'two' is not a whole number"),
    (["--seeds", "0", "-1"], "--seeds=-1 must be in [0, 4294967295]"),
    (["--problem-seed", str(2**70)], f"--problem-seed={2**70} must be in [0, 4294967295]"),
    (["--problems", "0"], "0 problems: search at least one problem"),
])
def test_a_bad_argument_is_one_usage_line(capsys: pytest.CaptureFixture[str], argv: list[str], reason: str) -> None:
    with pytest.raises(SystemExit) as exited:
        _args(argv)
    assert exited.value.code == 2
    last = capsys.readouterr().err.splitlines()[-1]
    assert ": error: argument " in last and reason in last, last


def test_good_arguments_parse() -> None:
    args = _args(["--m", "1", "--seeds", "0", "4294967295", "--problems", "3"])
    assert (args.m, args.seeds, args.problems) == (1, [0, 4294967295], 3)
