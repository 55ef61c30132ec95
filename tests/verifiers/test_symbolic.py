"""SymPy path of the arithmetic step verifier: functions, constants and variables, bounded on hostile text."""

from __future__ import annotations

import time

import pytest

from verifiers import check_arithmetic_step, check_steps
from verifiers.symbolic import check_symbolic_equations, symbolic_equations, symbolic_tokenize

TIMEOUT_S = 2.0


@pytest.mark.parametrize(
    "step,status",
    [
        (r"$\sqrt{16} = 4$", "correct"),
        (r"$\sqrt{15} = 4$", "incorrect"),
        (r"$\sqrt{2}^2 = 2$", "correct"),
        (r"$2\sqrt{2} \cdot \sqrt{2} = 4$", "correct"),
        (r"$\frac{\pi}{2} = 1.5708$", "correct"),  # rounded to the written precision
        (r"$\frac{\pi}{2} = 1.571$", "correct"),
        (r"$\frac{\pi}{2} = 1.5709$", "incorrect"),
        (r"$\pi = 3$", "incorrect"),
        (r"$3\pi = 9.42$", "correct"),
        (r"$\sin(0) = 0$", "correct"),
        ("sqrt(49) = 7", "correct"),
        ("2x + 3x = 5x", "correct"),  # an identity in x
        ("(x+1)^2 = x^2 + 2x + 1", "correct"),
        ("2x + 3x = 6x", "unverifiable"),  # true only at x = 0: an equation, not an identity
        ("x^2 = 4", "unverifiable"),  # an equation to solve
        ("Let x = 3 + 4 = 7", "correct"),  # the plain part is still checked
        (r"$\sqrt{16} = 4$ and 2+2 = 5", "incorrect"),  # the fast path's verdict stands
        (r"$\sqrt[3]{8} = 2$", "unverifiable"),  # root index: outside the grammar
        ("So I have 5 apples.", "unverifiable"),
        (r"$2^{10} = 1024$", "correct"),  # plain arithmetic keeps the Fraction path
        # Double renderings and roundings: the same rule as the Fraction path (verifiers.rounding).
        ("sqrt(2) = 1.4142135623730951", "correct"),
        (r"$\sqrt{3} \cdot \sqrt{3} = 2.9999999999999996$", "correct"),  # float sqrt(3)**2
        (r"$\frac{\pi}{2} = 1.5707963267948966$", "correct"),
        (r"$\frac{\pi}{2} = 1.5707963667948966$", "incorrect"),
        ("sqrt(16)/3 = 1.33", "correct"),  # a rational value written rounded, as 4/3 = 1.33 is
        ("sqrt(16)/3 = 1.43", "incorrect"),
    ],
)
def test_symbolic_table(step: str, status: str) -> None:
    verdict = check_arithmetic_step(step)
    assert verdict.status == status, verdict


@pytest.mark.parametrize(
    "step",
    [
        "x^4096 = 1",  # symbolic exponent cap
        "(1+x)^100000 = 1",
        r"\sqrt{2}^{100000} = 2",
        r"$\sqrt{2^{5000}} = 2$",  # value bits cap
        "2^2^2^2^2^2 = x",
        r"\sqrt{" * 100 + "2" + "}" * 100 + " = 2",  # nesting cap
        r"\sin(" * 30 + "x" + ")" * 30 + " = x",
        "x" + "*x" * 1500 + " = 1",
        r"$\pi^{\pi^{\pi}} = 1$",  # non-numeric exponent
        "__import__('os').system('ls') + x = x",
    ],
)
def test_adversarial_symbolic_is_bounded(step: str) -> None:
    start = time.monotonic()
    verdict = check_arithmetic_step(step)
    assert time.monotonic() - start < 60 * TIMEOUT_S  # bounded (a hang fails), with room for a loaded machine
    assert verdict.status in ("unverifiable", "incorrect"), verdict


def test_batch_through_the_pool_runs_sympy_in_the_workers() -> None:
    rows = [r"$\sqrt{16} = 4$", r"$\sqrt{15} = 4$", "x^2 = 4", "48/2 = <<48/2=24>>24"] * 8
    verdicts = check_steps(rows, timeout_s=TIMEOUT_S)
    assert [v.status for v in verdicts[:4]] == ["correct", "incorrect", "unverifiable", "correct"]
    assert [v.status for v in verdicts] == [v.status for v in verdicts[:4]] * 8


def test_tokens_and_equations() -> None:
    kinds = [(t.kind, t.text) for t in symbolic_tokenize(r"\pi x + sqrt(2)")]
    assert kinds == [("CONST", "pi"), ("VAR", "x"), ("OP", "+"), ("FUNC", "sqrt"), ("LP", "("), ("NUM", "2"),
                     ("RP", ")")]
    assert [str(e) for e in symbolic_equations(r"$\sqrt{16} = 4$ so 2+2 = 4")] == ["sqrt(16) = 4"]
    verdict = check_symbolic_equations(symbolic_equations(r"$\sqrt{15} = 4$"))
    assert verdict.status == "incorrect" and "sqrt(15) = 4" in verdict.detail
