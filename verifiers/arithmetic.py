"""Exact arithmetic step checks: find the equations a step asserts and check each one.

A step asserts equations as plain ``a op b = c``, chains ``a = b = c``, rewrites
``12+7-3*2 = 12+7-6``, GSM8K calculator annotations ``<<48/2=24>>`` and simple LaTeX
(``\\frac``, ``\\times``, ``\\cdot``, ``\\div``). Values are exact rationals
(:mod:`verifiers.expression`); a side written as a decimal literal may be rounded
(``10/3 = 3.33``, within one unit of its last digit) or a double's rendering
(``1/3*5 = 1.6666666666666665``): :mod:`verifiers.rounding` decides both.

Every limit in :mod:`verifiers.constants` bounds this module's work, so
:func:`check_arithmetic_step` is safe to call in-process; batches go through :mod:`verifiers.pool`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

from verifiers.constants import MAX_EQUATIONS, MAX_NESTING_DEPTH, MAX_STEP_CHARS, MAX_TOKENS
from verifiers.expression import ExpressionError, Token, evaluate, tokenize
from verifiers.rounding import decimal_literal, decimal_stands_for
from verifiers.verdict import StepVerdict

__all__ = ["check_arithmetic_step", "find_equations"]

_ANNOTATION = re.compile(r"<<([^<>]{0,500})>>")
# Words that make a number next to them an operand of prose arithmetic ("3 times 4 = 12",
# "20% of 50 = 10"): reading only the digits would grade a claim the step never made.
_OPERATOR_WORDS = frozenset(
    {
        "of", "times", "plus", "minus", "divided", "multiplied", "by", "over", "per", "less", "more",
        "than", "squared", "cubed", "twice", "half", "double", "triple", "quarter", "third",
        "thirds", "percent", "dozen", "x", "X",
    }
)
_LATEX_SUBS = (
    (re.compile(r"\\(?:left|right|big|Big|bigg|Bigg)(?=[()\[\]|.])"), ""),
    (re.compile(r"\\(?:left|right)\\([{}])"), r"\1"),
    (re.compile(r"\{,\}"), ","),
    (re.compile(r"\\[,!;: ]|\\q?quad\b"), " "),
    (re.compile(r"\\(?:times|cdot|ast)(?![A-Za-z])"), "*"),
    (re.compile(r"\\div(?![A-Za-z])"), "/"),
    (re.compile(r"\\%"), "%"),
    (re.compile(r"\\\$"), "$"),
    (re.compile(r"\\[()\[\]]"), " "),
    (re.compile(r"\\[dt]?frac\s*(\d)\s*(\d)"), r"((\1)/(\2))"),
)
_FRAC = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
_GROUP = re.compile(r"\{([^{}]*)\}")


@dataclass(frozen=True)
class Equation:
    """One asserted equality ``lhs = rhs``; ``problem`` is set when a side could not be read."""

    lhs: tuple[Token, ...]
    rhs: tuple[Token, ...]
    problem: str = ""

    def __str__(self) -> str:
        return f"{_render(self.lhs)} = {_render(self.rhs)}"


def _render(tokens: tuple[Token, ...]) -> str:
    return "".join(t.text for t in tokens)


def _latex_to_plain(text: str) -> str:
    for pattern, repl in _LATEX_SUBS:
        text = pattern.sub(repl, text)
    for _ in range(MAX_NESTING_DEPTH):
        text, count = _FRAC.subn(r"((\1)/(\2))", text)
        if not count:
            break
    # Exponent groups 2^{10} and leftover braces are brackets; \sqrt{..} keeps its letters, so the
    # group stays glued to a word and is never read as a bare number.
    return _GROUP.sub(r"(\1)", text).replace("{", "(").replace("}", ")")


def _screen(text: str) -> str | None:
    """Reason the text cannot be checked at all, or None."""
    if len(text) > MAX_STEP_CHARS:
        return f"step longer than {MAX_STEP_CHARS} characters"
    for ch in text:
        if ord(ch) < 32 and ch not in "\t\n\r":
            return f"control character U+{ord(ch):04X} in step"
    return None


def _lookalike(tok: Token | None) -> bool:
    """A non-ASCII symbol next to an expression (``5 − 3``, ``２``, ``25 × 2``): the operand it hides
    may be an operator or digit, so the adjacent expression cannot be read as written."""
    return tok is not None and tok.kind == "SEP" and not tok.text.isascii()


def _glued_left(text: str, index: int) -> bool:
    """True when the expression starting at ``index`` touches a word or symbol (``\\sqrt{16}``, ``6:10``)."""
    return index > 0 and not text[index - 1].isspace() and text[index - 1] not in "($=[{"


def _glued_right(text: str, index: int) -> bool:
    """True when the expression ending at ``index`` runs on into a word or a number (``12x``, ``6:48``)."""
    if index >= len(text):
        return False
    ch = text[index]
    return ch.isalpha() or ch in "_\\" or (ch in ":/.," and index + 1 < len(text) and text[index + 1].isdigit())


def _neighbour_op(tokens: list[Token], k: int, step: int) -> bool:
    """True when the nearest math token from ``k`` in direction ``step`` is an operator (``8 + Riley's 5``)."""
    while 0 <= k < len(tokens):
        if tokens[k].kind not in ("WORD", "SEP"):
            return tokens[k].kind == "OP"
        k += step
    return False


def _split_runs(tokens: list[Token]) -> list[tuple[int, int]]:
    """Index ranges of maximal runs of math tokens (no WORD/SEP inside)."""
    runs, start = [], None
    for k, tok in enumerate(tokens):
        if tok.kind in ("WORD", "SEP"):
            if start is not None:
                runs.append((start, k))
            start = None
        elif start is None:
            start = k
    if start is not None:
        runs.append((start, len(tokens)))
    return runs


def _run_equations(text: str, tokens: list[Token], lo: int, hi: int, prose: bool) -> list[Equation]:
    sides: list[list[Token]] = [[]]
    for tok in tokens[lo:hi]:
        if tok.kind == "EQ":
            sides.append([])
        else:
            sides[-1].append(tok)
    if len(sides) < 2:
        return []
    before = tokens[lo - 1] if lo > 0 else None
    after = tokens[hi] if hi < len(tokens) else None
    first, last = sides[0], sides[-1]
    # An operand continues into prose: "3 times 4 = 12", "4 apples + 3 = 7", "\sqrt{16} = 4", "x^2 = 4".
    # Calculator annotations are whole expressions ("<<+30+46=76>>"): only prose can hide an operand.
    cut_left = prose and bool(first) and (
        (before is not None and before.kind == "WORD" and before.text.lower() in _OPERATOR_WORDS)
        or (first[0].kind == "OP" and (first[0].text != "-" or (before is not None and before.kind == "WORD")))
        or (before is not None and before.text == "," and lo >= 2 and tokens[lo - 2].kind == "NUM")  # 14, 400
        or (len(first) == 1 and before is not None and before.kind == "WORD")  # "sold is 4=6*15"
        or _glued_left(text, first[0].start)
        or _neighbour_op(tokens, lo - 1, -1)
        or _lookalike(before)
    )
    cut_right = prose and bool(last) and (
        (after is not None and after.kind == "WORD" and after.text.lower() in _OPERATOR_WORDS)
        or last[-1].kind == "OP"
        or _glued_right(text, last[-1].end)
        or _neighbour_op(tokens, hi, 1)
        or _lookalike(after)
    )
    equations = []
    for k in range(len(sides) - 1):
        lhs, rhs = sides[k], sides[k + 1]
        if not lhs or not rhs:
            continue  # "The total = 24": one side is prose, so no arithmetic claim is made here
        problem = ""
        if (k == 0 and cut_left) or (k + 1 == len(sides) - 1 and cut_right):
            problem = "operand continues into words"
        equations.append(Equation(tuple(lhs), tuple(rhs), problem))
    return equations


def find_equations(step_text: str, tokenizer: Callable[[str], list[Token]] = tokenize) -> list[Equation]:
    """The equations a step asserts: calculator annotations first, then equations in the text.

    ``tokenizer`` is :func:`~verifiers.expression.tokenize`, or the symbolic one of :mod:`verifiers.symbolic`.

    Raises :class:`~verifiers.expression.ExpressionError` on text beyond the size limits.

    >>> [str(e) for e in find_equations("Natalia sold 48/2 = <<48/2=24>>24 clips.")]
    ['48/2 = 24']
    >>> [str(e) for e in find_equations(r"$\\frac{1}{2} \\times 8 = 4 = 2+2$")]
    ['((1)/(2))*8 = 4', '4 = 2+2']
    """
    annotations = _ANNOTATION.findall(step_text)
    text = _latex_to_plain(_ANNOTATION.sub(" ", step_text))
    equations: list[Equation] = []
    for chunk in [*annotations, text]:
        tokens = tokenizer(chunk)
        if len(tokens) > MAX_TOKENS:
            raise ExpressionError(f"more than {MAX_TOKENS} tokens")
        for lo, hi in _split_runs(tokens):
            equations.extend(_run_equations(chunk, tokens, lo, hi, prose=chunk is text))
    unique: dict[str, Equation] = {}
    for eq in equations:
        unique.setdefault(str(eq), eq)
    return list(unique.values())


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

    >>> check_arithmetic_step("12+7-3*2 = 12+7-6").status
    'correct'
    >>> v = check_arithmetic_step("She pays 3*$4 = $<<3*4=13>>13.")
    >>> v.status, v.detail
    ('incorrect', '3*4 = 13 (left is 12, right is 13)')
    >>> check_arithmetic_step("10/3 = 3.33").status
    'correct'
    >>> check_arithmetic_step("__import__('os').system('ls')").status
    'unverifiable'
    """
    if not isinstance(step_text, str) or not step_text.strip():
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
    checked: list[str] = []
    skipped: list[str] = []
    for eq in equations:
        if eq.problem:
            skipped.append(f"{eq}: {eq.problem}")
            continue
        try:
            lhs, rhs = evaluate(list(eq.lhs)), evaluate(list(eq.rhs))
        except ExpressionError as exc:
            skipped.append(f"{eq}: {exc}")
            continue
        checked.append(str(eq))
        if not _holds(eq, lhs, rhs):
            detail = f"{eq} (left is {_show(lhs)}, right is {_show(rhs)})"
            return StepVerdict("incorrect", detail, tuple(checked))
    if skipped or not checked:  # functions, constants, variables: SymPy, off this thread (verifiers.symbolic)
        from verifiers.symbolic import check_symbolic

        symbolic = check_symbolic(step_text)
        if symbolic is not None and symbolic.status == "incorrect":
            return StepVerdict("incorrect", symbolic.detail, (*checked, *symbolic.equations))
        if symbolic is not None and symbolic.status == "correct":  # its notes cover the step's skipped parts
            return StepVerdict("correct", symbolic.detail, (*checked, *symbolic.equations))
        if symbolic is not None:
            skipped.append(symbolic.detail)
    if not checked:
        return StepVerdict.unverifiable("; ".join(skipped) if skipped else "no equation found")
    return StepVerdict("correct", "; ".join(f"skipped {s}" for s in skipped), tuple(checked))


def _show(value: Fraction) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    return f"{value.numerator}/{value.denominator} ≈ {float(value):.6g}"
