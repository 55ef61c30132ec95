"""Hostile step text: no code runs, no call overruns its limit, verdicts are never "correct",
and the rows after a hostile one are still verified."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from verifiers import check_arithmetic_step, check_logic_step, check_steps, grade_answers

TIMEOUT_S = 2.0
# Wall-clock bound for pool calls: far above what they take even on a loaded 2-core machine, far below a hang.
HANG_BOUND_S = 120.0


def _hostile(sentinel: Path) -> list[str]:
    return [
        f"__import__('os').system('touch {sentinel}') = 0",
        f"1 + __import__('os').system('touch {sentinel}') = 1",
        "9**9**9**9 = 1",
        "2^2^2^2^2^2 = 4",
        "(" * 10_000 + "1" + ")" * 10_000 + " = 1",
        "(" * 5_000 + "1" + ")" * 5_000 + " = 1",  # under the length limit: stopped by the depth limit
        "1" * 1_000_000 + " = 1",
        "1" * 5_000 + " = 1",
        "１+１=３",  # fullwidth digits
        "5 − 3 = 3",  # U+2212 minus
        "2 × 3 = 7",  # U+00D7 times
        "2\x00+2=5",
        "",
        "=",
        "= = =",
        "\\frac{" * 500 + "1",
    ]


def test_hostile_arithmetic_batch(tmp_path: Path) -> None:
    sentinel = tmp_path / "pwned"
    rows: list[str] = []
    for text in _hostile(sentinel):
        rows += [text, "48/2 = <<48/2=24>>24"]
    start = time.monotonic()
    verdicts = check_steps(rows, timeout_s=TIMEOUT_S)
    assert time.monotonic() - start < HANG_BOUND_S  # bounded, not fast: a loaded 2-core box is slow
    for text, verdict in zip(rows[::2], verdicts[::2], strict=True):
        assert verdict.status in ("unverifiable", "incorrect"), (text[:40], verdict)
    assert all(v.status == "correct" for v in verdicts[1::2])
    assert not sentinel.exists()


@pytest.mark.parametrize("index", range(16))
def test_hostile_in_process_is_fast(tmp_path: Path, index: int) -> None:
    text = _hostile(tmp_path / "pwned")[index]
    start = time.process_time()  # this process's CPU time: holds on a loaded machine, unlike wall time
    verdict = check_arithmetic_step(text)
    assert time.process_time() - start < 0.5  # the in-process path is bounded by the grammar's limits
    assert verdict.status in ("unverifiable", "incorrect")
    assert not (tmp_path / "pwned").exists()


@pytest.mark.parametrize("index", range(16))
def test_hostile_logic_step(tmp_path: Path, index: int) -> None:
    text = _hostile(tmp_path / "pwned")[index] + " -> A is true"
    start = time.process_time()
    verdict = check_logic_step(text)
    assert time.process_time() - start < 0.5
    assert verdict.status in ("unverifiable", "incorrect")
    assert not (tmp_path / "pwned").exists()


def test_hostile_answers(tmp_path: Path) -> None:
    sentinel = tmp_path / "pwned"
    rows = [(text, "3") for text in [*_hostile(sentinel)[:4], "１", "\x00", ""]] + [("3", "3"), ("3.0", "3")]
    start = time.monotonic()
    grades = grade_answers(rows, timeout_s=TIMEOUT_S)
    assert time.monotonic() - start < HANG_BOUND_S
    assert grades[-2:] == [True, True]
    assert not any(grades[:-2])
    assert not sentinel.exists()


# Operator chains of about 2,200 characters (issue 14): every operation is size-checked, in-process
# and through the pool, so none raises and none gets a "correct" it did not earn.
OPERATOR_CHAINS = [
    "1" + "%" * 2_200 + " = 1",
    "100" + "%" * 2_200 + " = 1",
    "5" + "%" * 1_100 + " = 5" + "%" * 1_099,
    "100" + "*100" * 733 + " = 1",
    "1" + "/99" * 733 + " = 1",
    "9" + "//0.00000001" * 183 + " = 1",
    "2" + "^2" * 1_100 + " = 4",
    "1" + "-" * 2_200 + "1 = 0",
    "The rate is 50" + "%" * 700 + " = 1 in all.",
]


@pytest.mark.parametrize("text", OPERATOR_CHAINS, ids=[f"chain{i}" for i in range(len(OPERATOR_CHAINS))])
def test_operator_chain_is_unverifiable_in_process(text: str) -> None:
    verdict = check_arithmetic_step(text)
    assert verdict.status == "unverifiable", verdict.detail[-200:]
    assert "exceeds" in verdict.detail or "nesting" in verdict.detail or "exponent" in verdict.detail


def test_operator_chains_through_the_pool() -> None:
    verdicts = check_steps([*OPERATOR_CHAINS, "2+2 = 4"], timeout_s=TIMEOUT_S)
    assert [v.status for v in verdicts] == ["unverifiable"] * len(OPERATOR_CHAINS) + ["correct"]
