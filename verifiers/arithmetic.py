"""Exact arithmetic step checks: find the equations a step asserts and check each one.

:mod:`verifiers.equations` finds the equations (plain, chained, rewrites, GSM8K calculator annotations,
simple LaTeX). Values are exact rationals (:mod:`verifiers.expression`); a side written as a decimal
literal may be rounded (``10/3 = 3.33``, within one unit of its last digit) or a double's rendering
(``1/3*5 = 1.6666666666666665``): :mod:`verifiers.rounding` decides both. Equations the exact path cannot
read go to :mod:`verifiers.symbolic`.

Every limit in :mod:`verifiers.constants` bounds this module's work, so
:func:`check_arithmetic_step` is safe to call in-process; batches go through :mod:`verifiers.pool`.
"""

from __future__ import annotations

from fractions import Fraction

from verifiers.constants import MAX_EQUATIONS, MAX_STEP_CHARS
from verifiers.equations import Decision, Equation, check_each, find_equations
from verifiers.expression import ExpressionError, evaluate
from verifiers.rounding import decimal_literal, decimal_stands_for
from verifiers.symbolic import check_symbolic
from verifiers.verdict import StepVerdict, has_text

__all__ = ["check_arithmetic_step"]


def _screen(text: str) -> str | None:
    """Reason the text cannot be checked at all, or None."""
    if len(text) > MAX_STEP_CHARS:
        return f"step longer than {MAX_STEP_CHARS} characters"
    for ch in text:
        if ord(ch) < 32 and ch not in "\t\n\r":
            return f"control character U+{ord(ch):04X} in step"
    return None


def _holds(eq: Equation, lhs: Fraction, rhs: Fraction) -> bool:
    if lhs == rhs:
        return True
    # "100 - 50 = 50%": a side ending in % may state the percentage itself (GSM8K's usage).
    if eq.rhs[-1].kind == "PCT" and eq.lhs[-1].kind != "PCT" and lhs == rhs * 100:
        return True
    if eq.lhs[-1].kind == "PCT" and eq.rhs[-1].kind != "PCT" and lhs * 100 == rhs:
        return True
    # A decimal literal side may be rounded ("10/3 = 3.33") or a double's rendering ("1.6666666666666665").
    for side, other, written, exact in ((eq.rhs, eq.lhs, rhs, lhs), (eq.lhs, eq.rhs, lhs, rhs)):
        literal = decimal_literal(side)
        if literal is not None and decimal_stands_for(exact, written, literal, other):
            return True
    return False


def check_arithmetic_step(step_text: str | None) -> StepVerdict:
    """Check every equation ``step_text`` asserts, exactly; never raises.

    ``correct``: at least one equation read and all that could be read hold. ``incorrect``: one fails
    (``detail`` names it). ``unverifiable``: nothing could be read (``detail`` says why).

    >>> [check_arithmetic_step(s).status for s in ("12+7-3*2 = 12+7-6", "10/3 = 3.33", "__import__('os')")]
    ['correct', 'correct', 'unverifiable']
    >>> v = check_arithmetic_step("She pays 3*$4 = $<<3*4=13>>13.")
    >>> v.status, v.detail
    ('incorrect', '3*4 = 13 (left is 12, right is 13)')
    """
    if not has_text(step_text):
        return StepVerdict.unverifiable("empty step")
    reason = _screen(step_text)
    if reason:
        return StepVerdict.unverifiable(reason)
    try:
        return _check(step_text)
    except (ArithmeticError, ValueError, RecursionError) as exc:
        # Every operation is size-checked (verifiers.constants); this is the second line for a path that
        # is not, so a batch caller still gets a verdict, with the reason to report.
        return StepVerdict.unverifiable(f"{type(exc).__name__}: {exc}"[:300])


def _check(step_text: str) -> StepVerdict:
    try:
        equations = find_equations(step_text)
    except ExpressionError as exc:
        return StepVerdict.unverifiable(str(exc))
    if len(equations) > MAX_EQUATIONS:
        return StepVerdict.unverifiable(f"more than {MAX_EQUATIONS} equations in one step")
    tally = check_each(equations, _decide)
    if tally.failed is None and (tally.skipped or not tally.checked):
        # Functions, constants, variables: SymPy, off this thread (verifiers.symbolic).
        symbolic = check_symbolic(step_text)
        if symbolic is not None and symbolic.status != "unverifiable":  # its notes cover the skipped parts
            return StepVerdict(symbolic.status, symbolic.detail, (*tally.checked, *symbolic.equations))
        if symbolic is not None:
            tally.skipped.append(symbolic.detail)
    return tally.verdict()


def _decide(eq: Equation) -> Decision:
    lhs, rhs = evaluate(list(eq.lhs)), evaluate(list(eq.rhs))
    if _holds(eq, lhs, rhs):
        return "correct", ""
    return "incorrect", f"{eq} (left is {_show(lhs)}, right is {_show(rhs)})"


def _show(value: Fraction) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    return f"{value.numerator}/{value.denominator} ≈ {float(value):.6g}"
