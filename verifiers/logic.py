"""Propositional step checks with Z3: a step ``premises -> conclusion`` is correct when
``premises ∧ ¬conclusion`` is unsatisfiable.

Step text (the format :mod:`prm.tasks.logic` generates)::

    A is true, B is false, if A and not B then C -> C is true

Formulas: atoms (``A``, ``wet_grass``), ``X is true``/``X is false``, ``not``, ``and``, ``or``,
``if X then Y`` and brackets. The text is read by a whitelist recursive-descent parser; Z3 only ever
sees formulas built from the parse tree. Z3's own timeout is set through solver params, below the
pool's wall-clock limit.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import Any, Union

from verifiers.constants import MAX_LOGIC_ATOMS, MAX_NESTING_DEPTH, MAX_STEP_CHARS, MAX_TOKENS, Z3_TIMEOUT_MS
from verifiers.verdict import StepVerdict, has_text

z3: Any = None  # imported on first check: workers that never check logic do not pay for it

__all__ = ["Formula", "LogicParseError", "check_logic_step", "format_formula", "parse_formula", "parse_step"]

# ("atom", name) | ("not", f) | ("and", f, g, ...) | ("or", f, g, ...) | ("if", f, g)
Formula = tuple[Union[str, "Formula"], ...]

# Spaces, then one token. ``(?<!\s)``: a match starts where a token ended (or at 0), never inside a run of spaces,
# so even a search over hostile text reads each run once (issue 38).
_TOKEN = re.compile(r"(?<!\s)\s*+(->|[(),]|[A-Za-z][A-Za-z0-9_]*+)")
_KEYWORDS = frozenset({"if", "then", "and", "or", "not", "is", "true", "false"})


class LogicParseError(ValueError):
    """Text outside the step grammar; :func:`check_logic_step` turns it into ``unverifiable``."""


def _tokenize(text: str) -> list[str]:
    tokens, pos = [], 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise LogicParseError(f"unexpected character {text[pos]!r} at {pos}")
        tokens.append(m.group(1).lower() if m.group(1).lower() in _KEYWORDS else m.group(1))
        pos = m.end()
        if len(tokens) > MAX_TOKENS:
            raise LogicParseError(f"more than {MAX_TOKENS} tokens")
    return tokens


class _Parser:
    def __init__(self, tokens: list[str]) -> None:
        self.tokens, self.pos, self.depth = tokens, 0, 0

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def expect(self, word: str) -> None:
        if self.peek() != word:
            raise LogicParseError(f"expected {word!r}, found {self.peek()!r}")
        self.pos += 1

    def nest(self, delta: int) -> None:
        self.depth += delta
        if self.depth > MAX_NESTING_DEPTH:
            raise LogicParseError(f"nesting deeper than {MAX_NESTING_DEPTH}")

    def formula(self) -> Formula:
        self.nest(1)
        if self.peek() == "if":
            self.pos += 1
            condition = self.disjunction()
            self.expect("then")
            result: Formula = ("if", condition, self.disjunction())
        else:
            result = self.disjunction()
        self.nest(-1)
        return result

    def disjunction(self) -> Formula:
        return self.joined("or", self.conjunction)

    def conjunction(self) -> Formula:
        return self.joined("and", self.negation)

    def joined(self, keyword: str, operand: Callable[[], Formula]) -> Formula:
        """``operand (keyword operand)*`` as one ``(keyword, ...)`` node, or the lone operand."""
        parts = [operand()]
        while self.peek() == keyword:
            self.pos += 1
            parts.append(operand())
        return parts[0] if len(parts) == 1 else (keyword, *parts)

    def negation(self) -> Formula:
        tok = self.peek()
        if tok == "not":
            self.pos += 1
            self.nest(1)
            inner = self.negation()
            self.nest(-1)
            return ("not", inner)
        if tok == "(":
            self.pos += 1
            inner = self.formula()
            self.expect(")")
            return inner
        if tok is None or tok in _KEYWORDS or not tok[0].isalpha():
            raise LogicParseError(f"expected an atom, found {tok!r}")
        self.pos += 1
        atom: Formula = ("atom", tok)
        if self.peek() == "is":
            self.pos += 1
            value = self.peek()
            if value not in ("true", "false"):
                raise LogicParseError(f"expected 'true' or 'false' after 'is', found {value!r}")
            self.pos += 1
            return atom if value == "true" else ("not", atom)
        return atom


def parse_formula(text: str) -> Formula:
    """Parse one formula; raises :class:`LogicParseError`.

    >>> parse_formula("if A and not B then C")
    ('if', ('and', ('atom', 'A'), ('not', ('atom', 'B'))), ('atom', 'C'))
    """
    parser = _Parser(_tokenize(text))
    result = parser.formula()
    if parser.peek() is not None:
        raise LogicParseError(f"unexpected {parser.peek()!r}")
    return result


def parse_step(text: str) -> tuple[list[Formula], Formula]:
    """Premises and conclusion of ``"p1, p2, ... -> conclusion"``; raises :class:`LogicParseError`."""
    if len(text) > MAX_STEP_CHARS:
        raise LogicParseError(f"step longer than {MAX_STEP_CHARS} characters")
    tokens = _tokenize(text)
    if tokens.count("->") != 1:
        raise LogicParseError("a step needs exactly one '->' between premises and conclusion")
    arrow = tokens.index("->")
    premises: list[Formula] = []
    if arrow:
        parser = _Parser(tokens[:arrow])
        premises.append(parser.formula())
        while parser.peek() == ",":
            parser.pos += 1
            premises.append(parser.formula())
        if parser.peek() is not None:
            raise LogicParseError(f"unexpected {parser.peek()!r} in premises")
    tail = _Parser(tokens[arrow + 1 :])
    conclusion = tail.formula()
    if tail.peek() is not None:
        raise LogicParseError(f"unexpected {tail.peek()!r} in conclusion")
    return premises, conclusion


def format_formula(f: Formula, top: bool = True) -> str:
    """Canonical text of a formula: literals at top level read ``A is true``/``A is false``.

    >>> format_formula(parse_formula("not (A)"))
    'A is false'
    >>> format_formula(parse_formula("if A is true and B is false then C"))
    'if A and not B then C'
    """
    kind = f[0]
    if kind == "atom":
        return f"{f[1]} is true" if top else str(f[1])
    if kind == "not":
        inner = f[1]
        assert isinstance(inner, tuple)
        if top and inner[0] == "atom":
            return f"{inner[1]} is false"
        return "not " + _wrapped(inner, ("atom", "not"))
    if kind in ("and", "or"):
        keep = ("atom", "not", "and") if kind == "and" else ("atom", "not", "and", "or")
        return f" {kind} ".join(_wrapped(g, keep) for g in f[1:])  # type: ignore[arg-type]
    condition, result = f[1], f[2]
    return f"if {_wrapped(condition, ('atom', 'not', 'and', 'or'))} then {_wrapped(result, ('atom', 'not', 'and', 'or'))}"  # type: ignore[arg-type]  # noqa: E501


def _wrapped(f: Formula, bare_kinds: tuple[str, ...]) -> str:
    text = format_formula(f, top=False)
    return text if f[0] in bare_kinds else f"({text})"


def _atoms(f: Formula, out: set[str]) -> set[str]:
    if f[0] == "atom":
        out.add(str(f[1]))
    else:
        for g in f[1:]:
            _atoms(g, out)  # type: ignore[arg-type]
    return out


def _to_z3(f: Formula, env: dict[str, Any]) -> Any:  # z3 expressions have no useful static type
    kind = f[0]
    if kind == "atom":
        return env[f[1]]
    args = [_to_z3(g, env) for g in f[1:]]  # type: ignore[arg-type]
    if kind == "not":
        return z3.Not(args[0])
    if kind == "and":
        return z3.And(*args)
    if kind == "or":
        return z3.Or(*args)
    return z3.Implies(args[0], args[1])


_LOCAL = threading.local()


def _solver() -> tuple[Any, Any]:
    """This thread's Z3 context and solver: Z3 contexts are not thread-safe, and building a context
    per call costs ~2 ms against ~0.3 ms for a check (push/pop keeps checks independent)."""
    if not hasattr(_LOCAL, "solver"):
        global z3
        import z3

        _LOCAL.ctx = z3.Context()
        _LOCAL.solver = z3.Solver(ctx=_LOCAL.ctx)
    return _LOCAL.ctx, _LOCAL.solver


def check_logic_step(step_text: str | None, timeout_ms: int = Z3_TIMEOUT_MS) -> StepVerdict:
    """Z3 check of one ``premises -> conclusion`` step; never raises.

    >>> check_logic_step("A is true, if A then B -> B is true").status
    'correct'
    >>> check_logic_step("B is true, if A then B -> A is true").status
    'incorrect'
    >>> check_logic_step("A is true -> ").status
    'unverifiable'
    """
    if not has_text(step_text):
        return StepVerdict.unverifiable("empty step")
    try:
        premises, conclusion = parse_step(step_text)
    except LogicParseError as exc:
        return StepVerdict.unverifiable(f"not a 'premises -> conclusion' step: {exc}")
    names: set[str] = set()
    for f in [*premises, conclusion]:
        _atoms(f, names)
    if len(names) > MAX_LOGIC_ATOMS:
        return StepVerdict.unverifiable(f"more than {MAX_LOGIC_ATOMS} atoms")
    claim = ", ".join(format_formula(p) for p in premises) + " -> " + format_formula(conclusion)
    ctx, solver = _solver()
    env = {name: z3.Bool(name, ctx) for name in names}
    solver.set("timeout", timeout_ms)
    solver.push()
    try:
        for p in premises:
            solver.add(_to_z3(p, env))
        solver.add(z3.Not(_to_z3(conclusion, env)))
        result = solver.check()
        if result == z3.unsat:
            return StepVerdict("correct", "", (claim,))
        if result == z3.sat:
            model = solver.model()
            counter = ", ".join(f"{n}={model.eval(env[n], model_completion=True)}" for n in sorted(names))
            return StepVerdict("incorrect", f"{claim} does not follow (counterexample: {counter})", (claim,))
        return StepVerdict.unverifiable(f"z3 gave no answer within {timeout_ms} ms: {solver.reason_unknown()}")
    finally:
        solver.pop()
