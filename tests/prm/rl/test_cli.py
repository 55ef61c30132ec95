"""``python -m prm.rl``: bad input is one ``Error:`` line and exit code 1, before any model loads."""

from __future__ import annotations

import re

import pytest

from prm.rl.__main__ import main


@pytest.mark.parametrize("argv,message", [
    (["run", "--arm", "outcome", "--prm", "PRM", "--out", "OUT", "--set", "foo=1"], "must be FIELD=VALUE"),
    (["compare", "--prm", "PRM", "--out", "OUT", "--steps", "0"], r"steps=0 must be in \[1, "),
    (["compare", "--prm", "PRM", "--out", "OUT", "--set", "eval_ops=[40]"], r"eval_ops=\(40,\) must hold"),
    (["run", "--arm", "prm_sum", "--prm", "PRM", "--out", "OUT", "--policy", "./missing"], "model path|neither"),
    (["run", "--arm", "prm_sum", "--prm", "MISSING", "--out", "OUT"], "no PRM at MISSING"),
])
def test_bad_input_is_one_error_line(argv, message, tmp_path, tiny_lm, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    argv = [a if a != "PRM" else str(tiny_lm) for a in argv]  # a folder with config.json
    if "--policy" not in argv:
        argv += ["--policy", str(tiny_lm)]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("Error: ") and err.count("\n") == 1
    assert re.search(message, err)
