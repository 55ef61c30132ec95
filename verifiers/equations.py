"""The equations a step asserts, and the tally of checking them one by one.

A step asserts equations as plain ``a op b = c``, chains ``a = b = c``, rewrites
``12+7-3*2 = 12+7-6``, GSM8K calculator annotations ``<<48/2=24>>`` and simple LaTeX
(``\\frac``, ``\\times``, ``\\cdot``, ``\\div``). :func:`find_equations` reads them with the tokenizer of
:mod:`verifiers.expression` (exact path, :mod:`verifiers.arithmetic`) or of :mod:`verifiers.symbolic`;
:func:`check_each` runs one checker over them and :class:`Tally` turns the result into a verdict.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from verifiers.constants import MAX_NESTING_DEPTH, MAX_TOKENS
from verifiers.expression import ExpressionError, Token, tokenize
from verifiers.verdict import StepVerdict

__all__ = ["Equation", "Tally", "check_each", "find_equations"]

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


def plain_text(step_text: str) -> str:
    """``step_text`` with calculator annotations (``<<48/2=24>>``) blanked and LaTeX rewritten as plain arithmetic:
    the text every reader of a step's numbers works on."""
    return _latex_to_plain(_ANNOTATION.sub(" ", step_text))


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
    text = plain_text(step_text)
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


# (status, detail) of one equation: "correct", "incorrect" (detail names the failure) or "unverifiable".
Decision = tuple[str, str]


@dataclass
class Tally:
    """What :func:`check_each` found: equations that held, notes on those it skipped, the first failure."""

    checked: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    failed: StepVerdict | None = None

    def verdict(self) -> StepVerdict:
        """``incorrect`` on a failure, ``correct`` when one held (with notes on skips), else ``unverifiable``."""
        if self.failed is not None:
            return self.failed
        if not self.checked:
            return StepVerdict.unverifiable("; ".join(self.skipped) if self.skipped else "no equation found")
        return StepVerdict("correct", "; ".join(f"skipped {s}" for s in self.skipped), tuple(self.checked))


def check_each(
    equations: Sequence[Equation],
    decide: Callable[[Equation], Decision],
    errors: tuple[type[Exception], ...] = (ExpressionError,),
    note_chars: int | None = None,
) -> Tally:
    """Run ``decide`` on each readable equation up to the first ``incorrect`` one.

    An equation with a ``problem``, or on which ``decide`` raises one of ``errors``, is skipped with a note
    (cut to ``note_chars``); other exceptions propagate.
    """
    tally = Tally()
    for eq in equations:
        if eq.problem:
            tally.skipped.append(f"{eq}: {eq.problem}")
            continue
        try:
            status, detail = decide(eq)
        except errors as exc:
            tally.skipped.append(f"{eq}: {exc}"[:note_chars])
            continue
        if status == "incorrect":
            tally.failed = StepVerdict("incorrect", detail, (*tally.checked, str(eq)))
            break
        if status == "correct":
            tally.checked.append(str(eq))
        else:
            tally.skipped.append(detail)
    return tally
