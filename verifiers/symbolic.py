"""SymPy checks of arithmetic steps that use functions, constants or a variable (``\\sqrt{16} = 4``, ``2x+3x = 5x``).

:mod:`verifiers.arithmetic` tries exact :class:`~fractions.Fraction` arithmetic first; only equations it
could not read and whose tokens include a whitelisted function (:data:`FUNCTIONS`), constant
(:data:`CONSTANTS`) or a single-letter variable come here. Text is never handed to ``sympify`` or
``parse_expr``: the same whitelist tokens are parsed by a small precedence parser that builds SymPy objects
with explicit constructors, under the size limits of :mod:`verifiers.constants`.

Decisions: without a variable, ``(lhs - rhs).equals(0)`` (a side written as a decimal literal may be
rounded or a double's rendering, decided by :mod:`verifiers.rounding` as in the exact path); with a
variable, only an identity is a claim (``expand``/``simplify`` of the difference is 0: ``correct``),
anything else is an equation to solve (``unverifiable``). SymPy calls run in a :mod:`verifiers.pool`
worker, whose per-item timeout kills a hung call; called from outside a worker, :func:`check_symbolic`
sends the equations to the shared pool.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

from verifiers.constants import (
    DEFAULT_STEP_TIMEOUT_S,
    MAX_EXPONENT,
    MAX_VALUE_BITS,
)
from verifiers.equations import Decision, Equation, check_each, find_equations
from verifiers.expression import ExpressionError, PrecedenceParser, Token, exact_power, tokenize
from verifiers.rounding import decimal_literal, decimal_stands_for
from verifiers.verdict import StepVerdict

__all__ = ["CONSTANTS", "FUNCTIONS", "check_symbolic", "check_symbolic_equations", "symbolic_equations",
           "symbolic_tokenize"]

FUNCTIONS = ("sqrt", "sin", "cos", "tan", "ln", "exp")  # \log is left out: base 10 or e depends on the text
CONSTANTS = ("pi",)
SYMBOLIC_KINDS = frozenset({"FUNC", "CONST", "VAR"})
# Exponent of a base that is not a plain number ((1+\sqrt{2})^n, x^n): expand() of x^64 has 65 terms, while
# (1+x)^4096 would build thousands of large binomials before the pool's timeout could stop it.
MAX_SYMBOLIC_EXPONENT = 64
# Root index of a rational exponent (8^{1/3}); MATH problems use square and cube roots, rarely beyond 4.
MAX_ROOT_INDEX = 12
# simplify() is only tried on differences with at most this many operations: it is the call that can
# run for minutes, and an identity a solution step states is short.
MAX_SIMPLIFY_OPS = 60
# Digits beyond the written precision when comparing a rounded decimal with an irrational value.
_EXTRA_DIGITS = 15
# A step is worth a symbolic pass only when it names a function/constant or has a lone letter.
_HINT = re.compile(r"\\?\b(?:" + "|".join(FUNCTIONS + CONSTANTS) + r")\b|(?<![A-Za-z])[A-Za-z](?![A-Za-z])")
_MATH_KINDS = frozenset({"OP", "EQ", "LP", "RP", "PCT", "FUNC", "CONST"})


def symbolic_tokenize(text: str) -> list[Token]:
    """:func:`verifiers.expression.tokenize`, then ``\\sqrt``/``sqrt`` become FUNC, ``\\pi``/``pi`` CONST and a
    single letter next to math (``2x``, ``x^2``, ``x =``) VAR; other words stay WORD.

    >>> [(t.kind, t.text) for t in symbolic_tokenize(r"\\sqrt(2) + 3x")]
    [('FUNC', 'sqrt'), ('LP', '('), ('NUM', '2'), ('RP', ')'), ('OP', '+'), ('NUM', '3'), ('VAR', 'x')]
    """
    raw = tokenize(text)
    out: list[Token] = []
    for tok in raw:
        if tok.kind == "WORD" and tok.text in FUNCTIONS + CONSTANTS:
            kind = "FUNC" if tok.text in FUNCTIONS else "CONST"
            start = tok.start
            if out and out[-1].kind == "SEP" and out[-1].text == "\\" and out[-1].end == tok.start:
                start = out.pop().start
            if kind == "FUNC" and tok.text == "sqrt" and text[tok.end:tok.end + 1] == "[":
                out.append(tok)  # \sqrt[3]{8}: a root index, which the grammar does not read
                continue
            out.append(Token(kind, tok.text, start, tok.end))
        else:
            out.append(tok)
    for k, tok in enumerate(out):
        if tok.kind == "WORD" and len(tok.text) == 1:
            prev = out[k - 1] if k else None
            nxt = out[k + 1] if k + 1 < len(out) else None
            glued_num = prev is not None and prev.kind == "NUM" and prev.end == tok.start
            if glued_num or any(t is not None and t.kind in _MATH_KINDS for t in (prev, nxt)):
                out[k] = Token("VAR", tok.text, tok.start, tok.end)
    return out


def has_symbolic_hint(text: str) -> bool:
    """Cheap screen: could the step contain a function, constant or variable at all?"""
    return _HINT.search(text) is not None


def symbolic_equations(step_text: str) -> list[Equation]:
    """The equations of a step that need SymPy (they contain a FUNC, CONST or VAR token).

    >>> [str(e) for e in symbolic_equations(r"So $\\sqrt{16} = 4$ and 2+2 = 4.")]
    ['sqrt(16) = 4']
    """
    return [eq for eq in find_equations(step_text, tokenizer=symbolic_tokenize)
            if any(t.kind in SYMBOLIC_KINDS for t in (*eq.lhs, *eq.rhs))]


def _sympy() -> Any:
    import sympy

    return sympy


def _guard(value: Any) -> Any:
    if value.is_Rational and max(int(value.p).bit_length(), int(value.q).bit_length()) > MAX_VALUE_BITS:
        raise ExpressionError(f"intermediate value exceeds {MAX_VALUE_BITS} bits")
    return value


class _Builder(PrecedenceParser):
    """The grammar of :mod:`verifiers.expression` building SymPy objects, plus ``FUNC primary``, CONST, VAR
    and implicit multiplication before a bracket, function, constant or variable (``2x``, ``3\\pi``)."""

    IMPLICIT = frozenset({"LP", "FUNC", "CONST", "VAR"})

    def __init__(self, tokens: Sequence[Token]) -> None:
        super().__init__(tokens)
        self.sp = _sympy()
        self.funcs: dict[str, Callable[[Any], Any]] = {"sqrt": self.sp.sqrt, "sin": self.sp.sin, "cos": self.sp.cos,
                                                       "tan": self.sp.tan, "ln": self.sp.log, "exp": self.sp.exp}

    def guard(self, value: Any) -> Any:
        return _guard(value)

    def implicit_factor(self) -> Any:
        return self.power()

    def binary(self, op: str, lhs: Any, rhs: Any) -> Any:
        if op in ("+", "-"):
            return _guard(lhs + rhs if op == "+" else lhs - rhs)
        if op == "//":
            raise ExpressionError("floor division outside plain arithmetic")
        if op == "/" and rhs.is_zero:
            raise ExpressionError("division by zero")
        return _guard(lhs * rhs if op == "*" else lhs / rhs)

    def pow(self, base: Any, exponent: Any) -> Any:
        if not exponent.is_Rational:
            raise ExpressionError("exponent is not a number")
        p, q = int(exponent.p), int(exponent.q)
        if base.is_Rational and q == 1:  # exact integer power: the Fraction path's own size checks
            value = exact_power(Fraction(int(base.p), int(base.q)), Fraction(p))
            return self.sp.Rational(value.numerator, value.denominator)
        if q > MAX_ROOT_INDEX or abs(p) > (MAX_EXPONENT if base.is_Rational else MAX_SYMBOLIC_EXPONENT):
            raise ExpressionError("exponent too large for a symbolic check")
        if base.is_zero and p < 0:
            raise ExpressionError("division by zero")
        if base.is_Rational:
            bits = max(int(base.p).bit_length(), int(base.q).bit_length())
            if bits * abs(p) > MAX_VALUE_BITS + bits:
                raise ExpressionError(f"power exceeds {MAX_VALUE_BITS} bits")
        return _guard(self.sp.Pow(base, exponent))

    def primary(self) -> Any:
        tok = self.take()
        if tok.kind == "NUM":
            assert tok.value is not None
            return self.sp.Rational(tok.value.numerator, tok.value.denominator)
        if tok.kind == "LP":
            return self.bracket()
        if tok.kind == "CONST":
            return self.sp.pi
        if tok.kind == "VAR":
            return self.sp.Symbol(tok.text)
        if tok.kind == "FUNC":
            self.nest(1)
            arg = self.primary()
            self.nest(-1)
            return self.funcs[tok.text](arg)
        raise ExpressionError(f"unexpected {tok.text!r}")


def _as_fraction(value: Any, places: int) -> Fraction | None:
    """``value`` exactly when rational, else to ``places + _EXTRA_DIGITS`` digits; None when not real."""
    if value.is_Rational:
        return Fraction(int(value.p), int(value.q))
    approx = value.evalf(places + _EXTRA_DIGITS)
    if not approx.is_real or not approx.is_finite:
        return None
    rational = _sympy().Rational(approx)
    return Fraction(int(rational.p), int(rational.q))


def _decide(eq: Equation) -> Decision:
    """(status, detail) of one equation, built in SymPy."""
    sp = _sympy()
    lhs, rhs = _Builder(eq.lhs).parse(), _Builder(eq.rhs).parse()
    diff = lhs - rhs
    if diff == 0:
        return "correct", ""
    names = sorted(str(s) for s in diff.free_symbols | lhs.free_symbols | rhs.free_symbols)
    if names:
        if sp.expand(diff) == 0 or (sp.count_ops(diff) <= MAX_SIMPLIFY_OPS and sp.simplify(diff) == 0):
            return "correct", ""
        return "unverifiable", f"{eq}: an equation in {', '.join(names)} to solve, not an identity"
    # A decimal side may be rounded (pi/2 = 1.5708) or a double's rendering (sqrt(2) = 1.4142135623730951):
    # the same rule as the exact path (verifiers.rounding).
    for side, other_tokens, written, other in ((eq.rhs, eq.lhs, rhs, lhs), (eq.lhs, eq.rhs, lhs, rhs)):
        literal = decimal_literal(side)
        if literal is None or not written.is_Rational:
            continue
        exact = _as_fraction(other, literal.decimals)
        if exact is None:
            return "unverifiable", f"{eq}: value is not a real number"
        if decimal_stands_for(exact, Fraction(int(written.p), int(written.q)), literal, other_tokens):
            return "correct", ""
        if not other.is_Rational:
            return "incorrect", f"{eq} (left ≈ {lhs.evalf(8)}, right ≈ {rhs.evalf(8)})"
    same = diff.equals(0)
    if same is True:
        return "correct", ""
    if same is False:
        return "incorrect", f"{eq} (left ≈ {lhs.evalf(8)}, right ≈ {rhs.evalf(8)})"
    return "unverifiable", f"{eq}: SymPy could not decide equality"


def check_symbolic_equations(equations: Sequence[Equation]) -> StepVerdict:
    """Check equations that need SymPy; the pool task ``"symbolic"``. Never raises on their content.

    >>> eqs = symbolic_equations(r"$\\sqrt{16} = 4$ and $\\sqrt{15} = 4$")
    >>> check_symbolic_equations(eqs).status
    'incorrect'
    """
    errors = (ExpressionError, ArithmeticError, ValueError, TypeError, RecursionError)
    return check_each(equations, _decide, errors, note_chars=500).verdict()


def check_symbolic(step_text: str, timeout_s: float = DEFAULT_STEP_TIMEOUT_S) -> StepVerdict | None:
    """SymPy verdict on the step's symbolic equations, None when it has none.

    Inside a pool worker the check runs here (the pool's timeout guards it); elsewhere it is sent to the
    shared pool, so a hung SymPy call is killed rather than blocking the caller.
    """
    if not has_symbolic_hint(step_text):
        return None
    try:
        equations = symbolic_equations(step_text)
    except ExpressionError as exc:
        return StepVerdict.unverifiable(str(exc))
    if not equations:
        return None
    from verifiers import pool

    if pool.in_worker():
        return check_symbolic_equations(equations)
    return pool.get_pool().run("symbolic", [equations], timeout_s)[0]
