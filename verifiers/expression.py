"""A whitelist arithmetic grammar: tokenizer and precedence parser over exact rationals.

Nothing here calls ``eval``/``sympify``: text is read token by token and every value is a
:class:`fractions.Fraction` whose size is checked after each operation, so one evaluation is bounded
by :data:`~verifiers.constants.MAX_TOKENS` operations on numbers of at most
:data:`~verifiers.constants.MAX_VALUE_BITS` bits.

Grammar (``^`` binds right, unary minus binds looser than ``^`` so ``-2^2 == -4``)::

    expr    := term (("+" | "-") term)*
    term    := unary (("*" | "/" | "//") unary | "(" expr ")")*   # 2(3+4) is implicit multiplication
    unary   := ("+" | "-") unary | power
    power   := postfix ("^" unary)?
    postfix := primary "%"*
    primary := NUMBER | "(" expr ")"
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from verifiers.constants import MAX_EXPONENT, MAX_NESTING_DEPTH, MAX_NUMBER_DIGITS, MAX_VALUE_BITS

__all__ = ["ExpressionError", "PrecedenceParser", "Token", "evaluate", "exact_power", "tokenize"]


class ExpressionError(ValueError):
    """Text outside the grammar or beyond a size limit; callers turn it into a verdict."""


@dataclass(frozen=True)
class Token:
    """One lexical unit. ``kind`` is NUM, OP (+-*/^), LP, RP, EQ, PCT, WORD or SEP."""

    kind: str
    text: str
    start: int
    end: int
    value: Fraction | None = None  # NUM only
    decimals: int = 0  # NUM only: digits after the decimal point, for rounding tolerance


# Thousands separators only in groups of three (1,234,567); otherwise a comma separates list items.
# ASCII digits only: another script's digit (٣, ２) or a superscript (²) is a symbol, never part of a number.
_NUMBER = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+", re.ASCII)
_WORD = re.compile(r"[A-Za-z_]+")
_SINGLE = {"+": "OP", "-": "OP", "*": "OP", "/": "OP", "^": "OP", "=": "EQ", "%": "PCT",
           "(": "LP", "[": "LP", ")": "RP", "]": "RP"}  # fmt: skip
# Currency signs do not end an expression (nor does whitespace); everything else not listed is a separator.
_SKIP = "$"
_DIGITS = frozenset("0123456789")  # ASCII only, as in _NUMBER


def _number(text: str, start: int, end: int) -> Token:
    digits = text.replace(",", "")
    if len(digits) > MAX_NUMBER_DIGITS + 1:
        raise ExpressionError(f"number longer than {MAX_NUMBER_DIGITS} digits")
    if "." not in digits:
        return Token("NUM", text, start, end, Fraction(int(digits)))  # int() first: 5x faster than from text
    return Token("NUM", text, start, end, Fraction(digits), len(digits.split(".")[1]))


def tokenize(text: str) -> list[Token]:
    """Split ASCII math text into tokens; letters become WORD, other symbols SEP.

    ``x`` between two operands is read as multiplication (``20 x 3``).

    >>> [t.text for t in tokenize("1,234 x 2 = $2,468.")]
    ['1,234', '*', '2', '=', '2,468', '.']
    """
    tokens: list[Token] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch in _SKIP or ch.isspace():
            i += 1
        elif ch in _DIGITS or (ch == "." and i + 1 < n and text[i + 1] in _DIGITS):
            j = i
            while j < n and text[j] in _DIGITS:
                j += 1
                if j - i > MAX_NUMBER_DIGITS:
                    raise ExpressionError(f"number longer than {MAX_NUMBER_DIGITS} digits")
            m = _NUMBER.match(text, i)
            assert m is not None  # a digit or ".digit" always matches
            tokens.append(_number(m.group(), i, m.end()))
            i = m.end()
        elif text.startswith("**", i) or text.startswith("//", i):
            tokens.append(Token("OP", "^" if ch == "*" else "//", i, i + 2))
            i += 2
        elif ch in _SINGLE:
            kind = _SINGLE[ch]
            tokens.append(Token(kind, "(" if kind == "LP" else ")" if kind == "RP" else ch, i, i + 1))
            i += 1
        elif ch.isascii() and (ch.isalpha() or ch == "_"):
            m = _WORD.match(text, i)
            assert m is not None
            tokens.append(Token("WORD", m.group(), i, m.end()))
            i = m.end()
        else:
            tokens.append(Token("SEP", ch, i, i + 1))
            i += 1
    return _times_words(tokens)


def _times_words(tokens: list[Token]) -> list[Token]:
    """Read a lone ``x`` between operands as ``*`` (``20 x 3``, ``(2)x(3)``)."""
    out = list(tokens)
    for k in range(1, len(out) - 1):
        t = out[k]
        if t.kind == "WORD" and t.text in ("x", "X") and out[k - 1].kind in ("NUM", "RP", "PCT") \
                and out[k + 1].kind in ("NUM", "LP"):  # fmt: skip
            out[k] = Token("OP", "*", t.start, t.end)
    return out


def _check_size(value: Fraction) -> Fraction:
    if value.numerator.bit_length() > MAX_VALUE_BITS or value.denominator.bit_length() > MAX_VALUE_BITS:
        raise ExpressionError(f"intermediate value exceeds {MAX_VALUE_BITS} bits")
    return value


class PrecedenceParser:
    """The whitelist grammar shared by the exact (Fraction) and the SymPy evaluators::

        expr    := term (("+" | "-") term)*
        term    := unary (("*" | "/" | "//") unary | implicit-product)*
        unary   := ("+" | "-") unary | power
        power   := postfix ("^" unary)?
        postfix := primary "%"*

    Subclasses say what values are: :meth:`primary`, :meth:`binary` (every binary operator), :meth:`pow`,
    :meth:`guard` (a size check after each other operation), which token kinds start an implicit product
    (``2(3)``; ``2x`` in SymPy) and how deep brackets and unary signs may nest (:attr:`MAX_DEPTH`).
    """

    IMPLICIT: frozenset[str] = frozenset({"LP"})
    MAX_DEPTH: int = MAX_NESTING_DEPTH

    def __init__(self, tokens: Sequence[Token]) -> None:
        self.tokens = list(tokens)
        self.pos = 0
        self.depth = 0

    def parse(self) -> Any:
        """The value of the whole token list; raises :class:`ExpressionError`."""
        if not self.tokens:
            raise ExpressionError("empty expression")
        value = self.expr()
        if self.pos != len(self.tokens):
            raise ExpressionError(f"unexpected {self.tokens[self.pos].text!r}")
        return value

    def peek(self) -> Token | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> Token:
        tok = self.peek()
        if tok is None:
            raise ExpressionError("expression ends early")
        self.pos += 1
        return tok

    def nest(self, delta: int) -> None:
        self.depth += delta
        if self.depth > self.MAX_DEPTH:
            raise ExpressionError(f"nesting deeper than {self.MAX_DEPTH}")

    def expr(self) -> Any:
        value = self.term()
        while (tok := self.peek()) is not None and tok.kind == "OP" and tok.text in "+-":
            self.pos += 1
            value = self.binary(tok.text, value, self.term())
        return value

    def term(self) -> Any:
        value = self.unary()
        while (tok := self.peek()) is not None:
            if tok.kind == "OP" and tok.text in ("*", "/", "//"):
                self.pos += 1
                value = self.binary(tok.text, value, self.unary())
            elif tok.kind in self.IMPLICIT:
                value = self.guard(value * self.implicit_factor())
            else:
                break
        return value

    def unary(self) -> Any:
        self.nest(1)
        tok = self.peek()
        if tok is not None and tok.kind == "OP" and tok.text in "+-":
            self.pos += 1
            value = self.unary()
            value = -value if tok.text == "-" else value
        else:
            value = self.power()
        self.nest(-1)
        return value

    def power(self) -> Any:
        base = self.postfix()
        tok = self.peek()
        if tok is None or tok.kind != "OP" or tok.text != "^":
            return base
        self.pos += 1
        return self.pow(base, self.unary())

    def postfix(self) -> Any:
        value = self.primary()
        while (tok := self.peek()) is not None and tok.kind == "PCT":
            self.pos += 1
            value = self.guard(value / 100)  # "1%%%%..." divides once per sign: size-checked like any op
        return value

    def bracket(self) -> Any:
        """The expression inside brackets whose opening token was just taken."""
        self.nest(1)
        value = self.expr()
        if self.take().kind != "RP":
            raise ExpressionError("unbalanced brackets")
        self.nest(-1)
        return value

    def implicit_factor(self) -> Any:
        return self.postfix()

    # --- what values are: the subclass's part ---------------------------------------------------
    def primary(self) -> Any:
        raise NotImplementedError

    def binary(self, op: str, lhs: Any, rhs: Any) -> Any:
        raise NotImplementedError

    def pow(self, base: Any, exponent: Any) -> Any:
        raise NotImplementedError

    def guard(self, value: Any) -> Any:
        return value


class _Parser(PrecedenceParser):
    """Exact rational arithmetic with :class:`~fractions.Fraction`, size-checked after every operation."""

    def primary(self) -> Fraction:
        tok = self.take()
        if tok.kind == "NUM":
            assert tok.value is not None
            return tok.value
        if tok.kind == "LP":
            return self.bracket()
        raise ExpressionError(f"unexpected {tok.text!r}")

    def binary(self, op: str, lhs: Fraction, rhs: Fraction) -> Fraction:
        if op in ("+", "-"):
            return _check_size(lhs + rhs if op == "+" else lhs - rhs)
        if op != "*" and rhs == 0:
            raise ExpressionError("division by zero")
        if op == "//":  # Python floor division, as in GSM8K's calculator annotations
            return _check_size(Fraction(lhs // rhs))
        return _check_size(lhs * rhs if op == "*" else lhs / rhs)

    def pow(self, base: Fraction, exponent: Fraction) -> Fraction:
        return exact_power(base, exponent)

    def guard(self, value: Fraction) -> Fraction:
        return _check_size(value)


def exact_power(base: Fraction, exponent: Fraction) -> Fraction:
    """``base ** exponent`` for an integer exponent, refused before it would exceed the size limits.

    >>> exact_power(Fraction(2), Fraction(10))
    Fraction(1024, 1)
    """
    if exponent.denominator != 1:
        raise ExpressionError("non-integer exponent")
    e = exponent.numerator
    if abs(e) > MAX_EXPONENT:
        raise ExpressionError(f"exponent larger than {MAX_EXPONENT}")
    if base == 0 and e < 0:
        raise ExpressionError("division by zero")
    if abs(base) not in (0, 1):
        bits = max(base.numerator.bit_length(), base.denominator.bit_length())
        if bits * abs(e) > MAX_VALUE_BITS + bits:
            raise ExpressionError(f"power exceeds {MAX_VALUE_BITS} bits")
    return _check_size(base**e)


def evaluate(tokens: list[Token]) -> Fraction:
    """Exact value of a token list that is one whole expression; raises :class:`ExpressionError`.

    >>> evaluate(tokenize("12+7-3*2"))
    Fraction(13, 1)
    >>> evaluate(tokenize("-2^2 + 50%"))
    Fraction(-7, 2)
    """
    return _Parser(tokens).parse()
