"""When a decimal a step writes stands for a value it does not equal exactly.

Two readings are accepted, and both arithmetic paths (:mod:`verifiers.arithmetic`, :mod:`verifiers.symbolic`)
call :func:`decimal_stands_for`, so they cannot drift apart:

* **Rounded or truncated** to the written precision: ``10/3 = 3.33``, ``10/3 = 3.34``. The exact value is
  not a decimal with that many places and lies within one unit of the last written digit (so the
  written value is the exact one rounded down or up there). ``260/3 = 86`` and ``7.5 = 7.4`` stay wrong.
* **A double-precision rendering**: ``1/3*5 = 1.6666666666666665``, ``2.12*17 = 36.040000000000001``.
  A decimal with at least :data:`~verifiers.constants.DOUBLE_MIN_DIGITS` significant digits is a
  machine's ``repr``/``%.17g`` of a float, not a person's rounding; it is correct when it is within
  :data:`~verifiers.constants.DOUBLE_REL_TOL` of the exact value, relative to the largest magnitude in
  the computation (float roundoff accumulates relative to the operands, as in ``1.1 - 1 =
  0.10000000000000009``). A slip changes a digit that carries the value, far outside that band.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from verifiers.constants import DOUBLE_MIN_DIGITS, DOUBLE_REL_TOL
from verifiers.expression import Token

__all__ = ["decimal_literal", "decimal_stands_for"]


def decimal_literal(side: Sequence[Token]) -> Token | None:
    """The number token of a side that is one decimal literal (optionally negated), else None.

    >>> from verifiers.expression import tokenize
    >>> decimal_literal(tokenize("-3.25")).text, decimal_literal(tokenize("3")) is None
    ('3.25', True)
    """
    body = side[1:] if len(side) == 2 and side[0].kind == "OP" and side[0].text == "-" else side
    if len(body) == 1 and body[0].kind == "NUM" and body[0].decimals > 0:
        return body[0]
    return None


def _significant_digits(literal: Token) -> int:
    return len(literal.text.replace(",", "").replace(".", "").lstrip("0"))


def decimal_stands_for(exact: Fraction, written: Fraction, literal: Token, other: Sequence[Token]) -> bool:
    """Whether ``written`` (the value of a side that is the decimal ``literal``) stands for ``exact``
    (the value of the ``other`` side): rounded/truncated at its last digit, or a double's rendering.

    >>> from verifiers.expression import tokenize
    >>> def holds(lhs: str, exact: Fraction, rhs: str) -> bool:
    ...     literal = decimal_literal(tokenize(rhs))
    ...     return decimal_stands_for(exact, Fraction(rhs), literal, tokenize(lhs))
    >>> holds("1/3*5", Fraction(5, 3), "1.6666666666666665"), holds("1/3*5", Fraction(5, 3), "1.67")
    (True, True)
    >>> holds("2.12*17", Fraction("36.04"), "36.040000000000001"), holds("2.12*17", Fraction("36.04"), "36.05")
    (True, False)
    >>> holds("1/3*5", Fraction(5, 3), "1.6666866666666665")  # a wrong digit where the value lives
    False
    """
    places = literal.decimals
    unit = Fraction(1, 10**places)
    # Rounded or truncated: only when the exact value needs more places than were written.
    if (exact * 10**places).denominator != 1 and abs(exact - written) < unit:
        return True
    if _significant_digits(literal) < DOUBLE_MIN_DIGITS:
        return False
    operands = [abs(t.value) for t in other if t.kind == "NUM" and t.value is not None]
    scale = max([abs(exact), *operands])
    return abs(exact - written) <= scale * DOUBLE_REL_TOL
