"""Seeded multi-step arithmetic problems with exact gold steps, and exact per-step truth.

Two styles share one generator and one checker:

* ``chain``: the question is an expression; each gold step rewrites the whole remaining expression with
  exactly one operation reduced (leftmost ``*`` first, then leftmost ``+``/``-``):
  ``12+7-3*2 = 12+7-6``, ``12+7-6 = 19-6``, ``19-6 = 13``.
* ``word``: a short story of sequential operations on a running total; gold steps ``12+7 = 19``,
  ``19-3 = 16``, ``16*2 = 32``.

Step truth (:func:`step_truth`) follows the PRM convention: a step is good only while the prefix can still
reach the answer, so after the first wrong step every later step is wrong. Model text is read by the
verifiers' bounded tokenizer and precedence parser (:mod:`verifiers.expression`), cut down to integers with
``+ - *`` and brackets; it is never ``eval``-ed and malformed text is a wrong step, not an exception.
"""

from __future__ import annotations

import hashlib
import random
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from prm.format import first_error_of, join_steps
from verifiers import ExpressionError, PrecedenceParser, Token, tokenize

__all__ = [
    "ArithmeticConfig",
    "ArithmeticProblem",
    "first_error_index",
    "generate_problems",
    "parse_expression",
    "step_truth",
]

STYLES = ("chain", "word")
OPERATORS = "+-*"
# Longest problem the generator builds; 32 operations is far past what the policy or a PRM is asked for.
MAX_OPS = 32
# Model text is hostile: an expression (one side of a step) longer than this is malformed (an 8-op chain
# line is ~60 characters). A task rule, tighter than verifiers.constants.MAX_STEP_CHARS, which bounds a
# whole prose step (GSM8K, MATH) that the verifiers read.
MAX_EXPRESSION_CHARS = 400
# Integer literals longer than this are malformed; 10**18 bounds every product the generator can make
# at its defaults and keeps a runaway model line from building huge integers.
MAX_DIGITS = 18
# Parenthesis nesting the parser accepts (word-style expressions need one level).
MAX_DEPTH = 8

_SYMBOLS = {"OP": ("+", "-", "*"), "LP": ("(",), "RP": (")",)}  # token kinds besides NUM the task reads
_NAMES = ("Mia", "Leo", "Ava", "Sam", "Zoe", "Max", "Ivy", "Tom")
_PRONOUN = {"Mia": "She", "Ava": "She", "Zoe": "She", "Ivy": "She"}  # the others take "He"


@dataclass(frozen=True)
class ArithmeticConfig:
    """Difficulty knobs of the generator."""

    n_ops: int = 4  # operations per problem = gold steps; the product targets 1..8
    operators: str = "+-*"  # subset of "+-*", drawn uniformly per operation
    min_value: int = 1  # smallest operand (>= 0: negative values only arise as intermediates)
    max_value: int = 20  # largest operand; 20 keeps products of a few factors within 5 digits
    style: str = "chain"  # "chain" (compact expression) or "word" (short word problem)

    def __post_init__(self) -> None:
        if not 1 <= self.n_ops <= MAX_OPS:
            raise ValueError(f"n_ops={self.n_ops} is out of range; set 1..{MAX_OPS} operations per problem")
        if not self.operators or set(self.operators) - set(OPERATORS):
            raise ValueError(f"operators={self.operators!r} must be a non-empty subset of {OPERATORS!r}")
        if not 0 <= self.min_value <= self.max_value:
            raise ValueError(
                f"need 0 <= min_value <= max_value, got {self.min_value}..{self.max_value}; "
                "operands are non-negative so chain expressions never contain '--'"
            )
        if self.style not in STYLES:
            raise ValueError(f"style={self.style!r} is unknown; use one of {STYLES}")


@dataclass(frozen=True)
class ArithmeticProblem:
    """One problem with its gold solution; ``intermediates[i]`` is the value computed by gold step ``i``
    (chain: the result of the reduced operation; word: the running total), so the last one is the answer."""

    problem_id: str  # "arith-" + sha1 of (style, question)[:12]; equal questions share an id
    style: str
    question: str  # prompt text shown to the policy
    expression: str  # chain: as shown; word: sequential order made explicit, e.g. "(12+7-3)*2"
    gold_steps: tuple[str, ...]
    intermediates: tuple[int, ...]
    answer: int

    @property
    def n_ops(self) -> int:
        """Number of operations (= gold steps)."""
        return len(self.gold_steps)

    def gold_solution(self) -> str:
        """Gold steps, one per line, then the answer line.

        >>> generate_problems(1, ArithmeticConfig(n_ops=1, operators="+"), seed=0)[0].gold_solution()
        '13+14 = 27\\nAnswer: 27'
        """
        return join_steps(self.gold_steps) + f"Answer: {self.answer}"


# --- parsing ---------------------------------------------------------------------------------------


class _IntegerParser(PrecedenceParser):
    """The verifiers' grammar cut down to the task's: integers, ``+ - *``, round brackets and at most one
    leading minus per factor (factor := ["-"] (INT | "(" expr ")")); counts binary operations."""

    IMPLICIT = frozenset()  # "2(3)" is malformed here
    MAX_DEPTH = MAX_DEPTH  # brackets only: unary() below does not nest

    def __init__(self, tokens: Sequence[Token]) -> None:
        super().__init__(tokens)
        self.ops = 0

    def unary(self) -> int:
        tok = self.peek()
        if tok is not None and tok.text == "-":
            self.pos += 1
            return -self.primary()
        return self.primary()

    def primary(self) -> int:
        tok = self.take()
        if tok.kind == "NUM":
            return int(tok.text)
        if tok.kind == "LP":
            return self.bracket()
        raise ExpressionError(f"expected a number, got {tok.text!r}")

    def binary(self, op: str, lhs: int, rhs: int) -> int:
        self.ops += 1
        return _apply(lhs, op, rhs)


def _tokens(text: str) -> tuple[list[Token], tuple[str, ...]]:
    """Tokens of ``text`` and their texts as written, when each is an integer, ``+ - *`` or a round bracket."""
    if len(text) > MAX_EXPRESSION_CHARS:
        raise ExpressionError("too long")
    # Any Unicode decimal digit is a digit here, as int() reads it; the shared tokenizer reads ASCII ones.
    plain = "".join(str(unicodedata.decimal(ch)) if ch.isdecimal() and not ch.isascii() else ch for ch in text)
    tokens = tokenize(plain)
    for tok in tokens:
        allowed = tok.text.isdigit() if tok.kind == "NUM" else tok.text in _SYMBOLS.get(tok.kind, ())
        if not allowed or plain[tok.start : tok.end] != tok.text:  # "x" read as "*", "[" as "(", "**" as "^"
            raise ExpressionError(f"unexpected {tok.text!r}")
        if tok.kind == "NUM" and len(tok.text) > MAX_DIGITS:
            raise ExpressionError("integer literal too long")
    if sum(tok.end - tok.start for tok in tokens) != sum(not ch.isspace() for ch in text):
        raise ExpressionError("unexpected character")  # one the tokenizer skips ("$")
    return tokens, tuple(text[tok.start : tok.end] for tok in tokens)


def parse_expression(text: str) -> tuple[int, int, tuple[str, ...]] | None:
    """``(value, n_operations, tokens)`` of an integer expression with ``+ - *`` and parentheses, or
    None when it does not parse (never raises on model text).

    >>> parse_expression("12 + 7-3*2")
    (13, 3, ('12', '+', '7', '-', '3', '*', '2'))
    >>> parse_expression("-4+2")[0], parse_expression("3-*2")
    (-2, None)
    """
    try:
        tokens, texts = _tokens(text)
        parser = _IntegerParser(tokens)
        return parser.parse(), parser.ops, texts
    except ExpressionError:
        return None


def _parse_step(step: str) -> tuple[tuple[int, int, tuple[str, ...]], tuple[int, int, tuple[str, ...]]] | None:
    """Both sides of ``lhs = rhs`` when the step is a true equation, else None."""
    if not isinstance(step, str) or step.count("=") != 1:
        return None
    lhs_text, rhs_text = step.split("=")
    lhs, rhs = parse_expression(lhs_text), parse_expression(rhs_text)
    if lhs is None or rhs is None or lhs[0] != rhs[0]:
        return None
    return lhs, rhs


# --- truth -----------------------------------------------------------------------------------------


def step_truth(problem: ArithmeticProblem, steps: Sequence[str]) -> list[bool]:
    """Per step: True while the solution is still on track to the exact answer.

    A step must be one true equation ``lhs = rhs`` that parses. Chain style: ``lhs`` must equal the
    current expression token for token (whitespace ignored) and ``rhs`` must have the same value with
    strictly fewer operations; it then becomes the current expression. Reducing several operations in
    one line is therefore accepted (the prefix still reaches the answer), a copy error or a line after
    the expression is fully reduced is not. Word style: step ``i`` must compute the exact running total
    ``intermediates[i]``; steps past the last operation are wrong. A solution shorter than gold gets
    True for each correct step (whether it reached the answer is the final-answer check's job).

    >>> p = generate_problems(1, ArithmeticConfig(n_ops=2, operators="+-"), seed=1)[0]
    >>> p.gold_steps
    ('5-19+3 = -14+3', '-14+3 = -11')
    >>> step_truth(p, ["5-19+3 = -14+3", "-14+3 = -12", "-12 = -12"])
    [True, False, False]
    """
    truth: list[bool] = []
    state = parse_expression(problem.expression)
    ok = state is not None
    for index, step in enumerate(steps):
        if ok:
            sides = _parse_step(step)
            if sides is None:
                ok = False
            elif problem.style == "chain":
                (_, lhs_ops, lhs_tokens), rhs = sides
                ok = state is not None and lhs_tokens == state[2] and rhs[1] < lhs_ops
                state = rhs
            else:
                ok = index < len(problem.intermediates) and sides[1][0] == problem.intermediates[index]
        truth.append(ok)
    return truth


def first_error_index(problem: ArithmeticProblem, steps: Sequence[str]) -> int:
    """0-based index of the first wrong step, -1 when every step is on track.

    >>> p = generate_problems(1, ArithmeticConfig(n_ops=2, style="word"), seed=3)[0]
    >>> p.gold_steps, first_error_index(p, ["8+19 = 27", "27-18 = 19"])
    (('8+19 = 27', '27-18 = 9'), 1)
    """
    return first_error_of(step_truth(problem, steps))


# --- generation ------------------------------------------------------------------------------------


def _apply(a: int, op: str, b: int) -> int:
    return a + b if op == "+" else a - b if op == "-" else a * b


def _render(numbers: list[int], ops: list[str]) -> str:
    return str(numbers[0]) + "".join(op + str(n) for op, n in zip(ops, numbers[1:], strict=True))


def _chain(numbers: list[int], ops: list[str]) -> tuple[str, tuple[str, ...], tuple[int, ...]]:
    """Expression, gold steps and per-step results, reducing the leftmost ``*`` first, then left to right."""
    numbers, ops = list(numbers), list(ops)
    expression = _render(numbers, ops)
    steps, results = [], []
    while ops:
        i = ops.index("*") if "*" in ops else 0
        before = _render(numbers, ops)
        value = _apply(numbers[i], ops[i], numbers[i + 1])
        numbers[i : i + 2] = [value]
        del ops[i]
        steps.append(f"{before} = {_render(numbers, ops)}")
        results.append(value)
    return expression, tuple(steps), tuple(results)


def _word(numbers: list[int], ops: list[str], rng: random.Random) -> tuple[str, str, tuple[str, ...], tuple[int, ...]]:
    """Question, explicit expression, gold steps and running totals of a points story."""
    name = rng.choice(_NAMES)
    pronoun = _PRONOUN.get(name, "He")
    sentences = [f"{name} starts with {numbers[0]} points."]
    expression, total = str(numbers[0]), numbers[0]
    steps, totals = [], []
    for op, n in zip(ops, numbers[1:], strict=True):
        if op == "+":
            sentences.append(f"{pronoun} wins {n}.")
        elif op == "-":
            sentences.append(f"{pronoun} loses {n}.")
        else:
            sentences.append(f"{pronoun} multiplies the points by {n}.")
        needs_parens = op == "*" and any(c in expression for c in "+-")
        expression = f"({expression}){op}{n}" if needs_parens else f"{expression}{op}{n}"
        new = _apply(total, op, n)
        steps.append(f"{total}{op}{n} = {new}")
        totals.append(new)
        total = new
    sentences.append(f"How many points does {name} have?")
    return " ".join(sentences), expression, tuple(steps), tuple(totals)


def _problem_id(style: str, question: str) -> str:
    return "arith-" + hashlib.sha1(f"{style}\n{question}".encode()).hexdigest()[:12]


def generate_problems(n: int, config: ArithmeticConfig, seed: int) -> list[ArithmeticProblem]:
    """``n`` problems drawn from ``random.Random(seed)``; the first ``k`` are the same for any ``n >= k``.

    Problems are independent draws, so small difficulty spaces can repeat a problem (same ``problem_id``).

    >>> [p.expression for p in generate_problems(2, ArithmeticConfig(n_ops=3), seed=0)]
    ['13*14-2-9', '10+16*12+19']
    """
    if n < 0:
        raise ValueError(f"n={n} must be >= 0 (number of problems to generate)")
    rng = random.Random(seed)
    problems = []
    for _ in range(n):
        numbers = [rng.randint(config.min_value, config.max_value) for _ in range(config.n_ops + 1)]
        ops = [rng.choice(config.operators) for _ in range(config.n_ops)]
        if config.style == "chain":
            expression, steps, values = _chain(numbers, ops)
            question = f"Evaluate {expression} one step per line."
        else:
            question, expression, steps, values = _word(numbers, ops, rng)
        problems.append(
            ArithmeticProblem(
                problem_id=_problem_id(config.style, question),
                style=config.style,
                question=question,
                expression=expression,
                gold_steps=steps,
                intermediates=values,
                answer=values[-1],
            )
        )
    return problems
