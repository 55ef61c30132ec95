"""A seeded sample of calculator lines, correct and slipped, that measures the arithmetic verifier.

Correct lines come in four kinds: ``integer`` (``48/2 = 24``), ``money`` (exact decimals, ``2.12*17 =
36.04``), ``rounded`` (a non-terminating value to 1-2 places, ``10/3 = 3.33``) and ``double`` (what a
model that ran Python writes: ``repr`` of the float evaluation ``1/3*5 = 1.6666666666666665``, or
``%.17g``/``repr`` of the nearest double of the exact value ``36.039999999999999``). Each is written as
a GSM8K calculator annotation ``<<a*b=c>>c`` with prose around it, or as a plain ``a * b = c`` line.

Slips change what a model writes the way real ones do: a wrong digit among the first
:data:`SLIP_DIGITS` significant digits, a result off by one, two adjacent digits swapped, the result of
a different operator, a dropped or shifted decimal point, a non-integer rounded to an integer
(``260/3 = 86``), and an operand copied wrong into the prose while the annotation is right (GSM8K's own
``8*3 = <<80*3=240>>240``). Digits past the 15th of a double rendering are roundoff, not slips, so no
slip is placed there.

Values are computed from expression trees (Fraction for the exact value, float for what Python
prints); no text is evaluated.

>>> lines = calculator_lines(n_correct=8, n_slips=2, seed=1)
>>> sum(line.correct for line in lines), sum(not line.correct for line in lines)
(8, 2)
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, localcontext
from fractions import Fraction
from typing import NamedTuple

from verifiers.verdict import StepVerdict

__all__ = ["CORRECT_KINDS", "SLIP_KINDS", "CalculatorLine", "SampleScore", "calculator_lines", "score_sample"]

CORRECT_KINDS = ("integer", "money", "rounded", "double")
SLIP_KINDS = ("wrong_digit", "off_by_one", "transposed", "wrong_operator", "dropped_decimal",
              "rounded_to_integer", "operand_typo")  # fmt: skip
# Share of each correct kind: doubles are over-represented on purpose (0.7% of real lines, nearly all
# the verifier's false alarms before it read them), so the false-alarm rate is measured where it lives.
_KIND_WEIGHTS = (0.35, 0.25, 0.15, 0.25)
# Slips change one of the first this many significant digits: where a value's information is.
SLIP_DIGITS = 8

_OPS: dict[str, tuple[Callable[[Fraction, Fraction], Fraction], Callable[[float, float], float]]] = {
    "+": (lambda a, b: a + b, lambda a, b: a + b),
    "-": (lambda a, b: a - b, lambda a, b: a - b),
    "*": (lambda a, b: a * b, lambda a, b: a * b),
    "/": (lambda a, b: a / b, lambda a, b: a / b),
}
# An expression tree: a number literal (its text) or (op, left, right).
Tree = str | tuple[str, "Tree", "Tree"]
_SHAPES = ("a*b", "a+b", "a-b", "a/b", "a*b+c", "a*b-c", "(a+b)*c", "a/b*c", "a*b/c", "a+b+c", "(a-b)/c")
_LEADS = ("She pays", "The total is", "Each box holds", "So he has", "They need", "The cost comes to",
          "That makes", "In all there are", "Now she has", "The distance is")  # fmt: skip
_TAILS = ("dollars", "apples", "minutes", "pages", "miles", "cookies", "", "in total", "each week")


class CalculatorLine(NamedTuple):
    """One line a model might write; ``kind`` is a correct kind or a slip kind."""

    text: str
    correct: bool
    kind: str


@dataclass(frozen=True)
class SampleScore:
    """Verdicts on a sample: a false alarm is a correct line judged ``incorrect``; a caught slip is a
    slipped line judged ``incorrect``. ``unverifiable`` lines count as neither."""

    n_correct: int
    n_slips: int
    false_alarms: int
    slips_caught: int
    correct_unverifiable: int
    missed: tuple[str, ...]  # texts of slips not caught, for the report
    alarms: tuple[str, ...]  # texts of correct lines judged incorrect

    @property
    def false_alarm_rate(self) -> float:
        return self.false_alarms / max(1, self.n_correct)

    @property
    def slip_recall(self) -> float:
        return self.slips_caught / max(1, self.n_slips)


def _value(tree: Tree, exact: bool) -> Fraction | float:
    if isinstance(tree, str):
        return Fraction(tree) if exact else float(tree)
    op, left, right = tree
    return _OPS[op][0 if exact else 1](_value(left, exact), _value(right, exact))  # type: ignore[arg-type]


def _text(tree: Tree, spaced: bool, top: bool = True) -> str:
    if isinstance(tree, str):
        return tree
    op, left, right = tree
    sep = f" {op} " if spaced else op
    inner = f"{_text(left, spaced, False)}{sep}{_text(right, spaced, False)}"
    return inner if top or op in "*/" else f"({inner})"


def _decimal_text(value: Fraction) -> str:
    """Exact decimal text of a value whose denominator divides a power of ten."""
    with localcontext() as ctx:
        ctx.prec = 60
        d = (Decimal(value.numerator) / Decimal(value.denominator)).normalize()
    return format(d, "f")


def _terminates(value: Fraction) -> bool:
    q = value.denominator
    for p in (2, 5):
        while q % p == 0:
            q //= p
    return q == 1


def _operand(rng: random.Random, kind: str) -> str:
    if kind == "money" or (kind == "double" and rng.random() < 0.5):
        return f"{rng.randint(1, 99)}.{rng.randint(1, 99):02d}".rstrip("0")
    return str(rng.randint(2, 999) if rng.random() < 0.6 else rng.randint(2, 30))


def _tree(rng: random.Random, kind: str) -> Tree:
    shape = rng.choice([s for s in _SHAPES if "/" in s] if kind == "rounded" else _SHAPES)
    names = {n: _operand(rng, kind) for n in "abc"}
    if kind in ("rounded", "double") and "/" in shape:
        names[shape[shape.index("/") + 1]] = str(rng.choice((3, 6, 7, 9, 11, 12, 13)))
    elif kind in ("integer", "money") and "/" in shape:
        divisor = str(rng.choice((2, 4, 5, 8, 10, 20, 25)))
        names[shape[shape.index("/") + 1]] = divisor
    return _parse_shape(shape, names)


def _parse_shape(shape: str, names: dict[str, str]) -> Tree:
    """The tree of one of :data:`_SHAPES` (a fixed, tiny set: no general parser needed)."""
    a, b, c = names["a"], names["b"], names["c"]
    trees: dict[str, Tree] = {
        "a*b": ("*", a, b), "a+b": ("+", a, b), "a-b": ("-", a, b), "a/b": ("/", a, b),
        "a*b+c": ("+", ("*", a, b), c), "a*b-c": ("-", ("*", a, b), c), "(a+b)*c": ("*", ("+", a, b), c),
        "a/b*c": ("*", ("/", a, b), c), "a*b/c": ("/", ("*", a, b), c), "a+b+c": ("+", ("+", a, b), c),
        "(a-b)/c": ("/", ("-", a, b), c),
    }  # fmt: skip
    return trees[shape]


def _render(rng: random.Random, kind: str, exact: Fraction, floating: float) -> str | None:
    """The result as a model of this kind writes it, or None when this value does not fit the kind."""
    if kind in ("integer", "money"):
        if not _terminates(exact):
            return None
        text = _decimal_text(exact)
        if kind == "integer" and exact.denominator != 1:
            return None
        if kind == "money" and exact.denominator != 1 and rng.random() < 0.5 and len(text.split(".")[1]) == 1:
            text += "0"  # $12.50
        return text
    if kind == "rounded":
        if _terminates(exact):
            return None
        unit = Decimal(1).scaleb(-rng.choice((1, 2, 2, 2)))  # 3.3 or 3.33
        return str(Decimal(exact.numerator / exact.denominator).quantize(unit, ROUND_HALF_UP))
    style = rng.choice(("repr_eval", "repr_eval", "g17_exact", "repr_exact"))
    if style == "repr_eval":  # what print(1/3*5) shows
        text = repr(floating)
    else:  # the nearest double of the exact value, printed in full or shortest
        text = f"{float(exact):.17g}" if style == "g17_exact" else repr(float(exact))
    if "e" in text or "inf" in text or "nan" in text:
        return None
    return text


def _line(rng: random.Random, expr_text: str, compact: str, result: str, prose_expr: str | None = None) -> str:
    """A calculator annotation with prose, or a plain equation; ``prose_expr`` overrides the prose's copy."""
    spaced = prose_expr if prose_expr is not None else expr_text
    style = rng.randrange(4)
    lead, tail = rng.choice(_LEADS), rng.choice(_TAILS)
    if style == 0:
        return f"{lead} {spaced} = <<{compact}={result}>>{result} {tail}".rstrip() + "."
    if style == 1:
        return f"{lead} ${spaced} = $<<{compact}={result}>>{result}."
    if style == 2:
        return f"{spaced} = {result}"
    return f"{lead} {spaced} = {result} {tail}".rstrip() + "."


def _correct_line(rng: random.Random, kind: str) -> tuple[Tree, str, str] | None:
    tree = _tree(rng, kind)
    exact = _value(tree, exact=True)
    assert isinstance(exact, Fraction)
    if exact <= 0 or exact > 10**7:  # GSM8K quantities: positive, modest
        return None
    result = _render(rng, kind, exact, float(_value(tree, exact=False)))
    if result is None:
        return None
    if kind == "integer" and exact >= 1000 and rng.random() < 0.3:
        result = f"{int(exact):,}"
    return tree, result, _line(rng, _text(tree, rng.random() < 0.5), _text(tree, False), result.replace(",", ""))


def _digits(text: str) -> list[int]:
    """Positions of the first :data:`SLIP_DIGITS` significant digits of a number's text."""
    seen, out = False, []
    for i, ch in enumerate(text):
        if ch.isdigit() and (seen or ch != "0"):
            seen = True
            out.append(i)
    return out[:SLIP_DIGITS]


def _slip(rng: random.Random, kind: str, tree: Tree, result: str) -> str | None:
    """The wrong result (or, for ``operand_typo``, the wrong prose expression) of one slip, or None."""
    plain = result.replace(",", "")
    exact = _value(tree, exact=True)
    assert isinstance(exact, Fraction)
    if kind == "wrong_digit":
        positions = _digits(plain)
        i = rng.choice(positions)
        choices = [d for d in "0123456789" if d != plain[i] and not (d == "0" and i == positions[0])]
        return plain[:i] + rng.choice(choices) + plain[i + 1 :]
    if kind == "off_by_one":
        return str(Decimal(plain) + rng.choice((-1, 1)))
    if kind == "transposed":
        positions = _digits(plain)
        pairs = [(i, j) for i, j in itertools.pairwise(positions) if j == i + 1 and plain[i] != plain[j]]
        if not pairs:
            return None
        i, j = rng.choice(pairs)
        return plain[:i] + plain[j] + plain[i] + plain[j + 1 :]
    if kind == "wrong_operator":
        if isinstance(tree, str):
            return None
        op, left, right = tree
        other = rng.choice([o for o in "+-*" if o != op])
        wrong = _value((other, left, right), exact=True)
        assert isinstance(wrong, Fraction)
        if wrong <= 0 or not _terminates(wrong):
            return None
        return _decimal_text(wrong)
    if kind == "dropped_decimal":
        if "." not in plain:
            return None
        whole, frac = plain.split(".")
        if rng.random() < 0.5:
            return (whole + frac).lstrip("0") or None  # 36.04 -> 3604
        return f"{whole}{frac[:1]}.{frac[1:]}".rstrip(".")  # 36.04 -> 360.4
    if kind == "rounded_to_integer":  # 260/3 = 86 or 87: fewer digits than the value needs
        if exact.denominator == 1 or exact < 2:
            return None
        return str(rng.choice((int(exact), int(exact) + 1)))
    raise ValueError(f"unknown slip kind {kind!r}; use one of {SLIP_KINDS}")


def _typo_tree(rng: random.Random, tree: Tree) -> Tree | None:
    """The tree with one operand miscopied (a digit dropped or changed): the prose of ``operand_typo``."""
    if isinstance(tree, str):
        if len(tree.replace(".", "")) < 2:
            return None
        i = rng.choice([k for k, ch in enumerate(tree) if ch.isdigit()])
        digit = "" if rng.random() < 0.5 else str((int(tree[i]) + 1) % 10)  # 80 -> 8 or 90
        typo = tree[:i] + digit + tree[i + 1 :]
        typo = typo.strip(".")
        return typo if typo and typo != tree and not typo.startswith("0") else None
    op, left, right = tree
    if rng.random() < 0.5:
        new = _typo_tree(rng, left)
        return None if new is None else (op, new, right)
    new = _typo_tree(rng, right)
    return None if new is None else (op, left, new)


def calculator_lines(n_correct: int = 1_500, n_slips: int = 300, seed: int = 0) -> list[CalculatorLine]:
    """``n_correct`` correct lines (kinds by :data:`_KIND_WEIGHTS`) and ``n_slips`` slipped ones (slip
    kinds in turn), shuffled; the same seed gives the same lines."""
    rng = random.Random(seed)
    lines: list[CalculatorLine] = []
    while sum(line.correct for line in lines) < n_correct:
        kind = rng.choices(CORRECT_KINDS, _KIND_WEIGHTS)[0]
        made = _correct_line(rng, kind)
        if made is not None:
            lines.append(CalculatorLine(made[2], True, kind))
    slips = 0
    while slips < n_slips:
        kind = SLIP_KINDS[slips % len(SLIP_KINDS)]
        base_kind = rng.choices(CORRECT_KINDS, _KIND_WEIGHTS)[0]
        made = _correct_line(rng, base_kind)
        if made is None:
            continue
        tree, result, _ = made
        if kind == "operand_typo":
            typo = _typo_tree(rng, tree)
            if typo is None or _value(typo, exact=True) == _value(tree, exact=True):
                continue
            text = _line(rng, _text(typo, rng.random() < 0.5), _text(tree, False), result.replace(",", ""))
            if "<<" not in text:  # the typo must sit beside a right annotation, as in GSM8K
                continue
        else:
            wrong = _slip(rng, kind, tree, result)
            if wrong is None or Fraction(wrong) == _value(tree, exact=True):
                continue
            text = _line(rng, _text(tree, rng.random() < 0.5), _text(tree, False), wrong)
        lines.append(CalculatorLine(text, False, kind))
        slips += 1
    rng.shuffle(lines)
    return lines


def score_sample(lines: Sequence[CalculatorLine], verdicts: Sequence[StepVerdict]) -> SampleScore:
    """Count false alarms and caught slips of ``verdicts`` (one per line, in order)."""
    if len(lines) != len(verdicts):
        raise ValueError(f"{len(lines)} lines but {len(verdicts)} verdicts; pass one verdict per line")
    pairs = list(zip(lines, verdicts, strict=True))
    alarms = tuple(ln.text for ln, v in pairs if ln.correct and v.status == "incorrect")
    missed = tuple(ln.text for ln, v in pairs if not ln.correct and v.status != "incorrect")
    n_correct = sum(ln.correct for ln in lines)
    return SampleScore(
        n_correct=n_correct,
        n_slips=len(lines) - n_correct,
        false_alarms=len(alarms),
        slips_caught=len(lines) - n_correct - len(missed),
        correct_unverifiable=sum(ln.correct and v.status == "unverifiable" for ln, v in pairs),
        missed=missed,
        alarms=alarms,
    )
