"""Every regex in the project stays linear on a megabyte of hostile text (issue 38 item 1).

The test finds the patterns itself, so a new one is covered without being listed: it parses every module of the
libraries and the code location (``prm``, ``verifiers``, ``warehouse``, ``pipelines``, ``assets``) for calls to
``re``; a pattern compiled at module level is imported and tested, and a call that compiles a pattern anywhere
else fails the test unless :data:`DYNAMIC` builds a sample of it (move it to module level instead).

Hostile inputs are derived from each pattern's own syntax tree: for every repeat in it, the literal text that
leads there followed by a megabyte of what the repeat consumes (and of spaces, newlines, digits), then a
character that ends the match; and each such prefix repeated to a megabyte. The budget is CPU seconds of this
process (``time.process_time``, which another process cannot inflate): 0.2 s per megabyte searched, one budget
per pattern over all its inputs; the chained ``\\s*`` verdict pattern of the judge took 14 s on 174 characters.
"""

from __future__ import annotations

import ast
import importlib
import multiprocessing
import re
import resource
import time
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection
from pathlib import Path

import pytest

try:  # Python 3.11+
    from re import _constants as sre_constants
    from re import _parser as sre_parse
except ImportError:  # pragma: no cover
    import sre_constants  # type: ignore[no-redef]
    import sre_parse  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("prm", "verifiers", "warehouse", "pipelines", "assets")
MB = 1_000_000
CPU_S_PER_MB = 0.2
_RE_FUNCTIONS = {"compile", "match", "search", "fullmatch", "findall", "finditer", "sub", "subn", "split"}
_MAX_INPUTS = 32  # per pattern; the prefixes of a long pattern repeat each other past this

# Patterns compiled inside a function, from arguments: (file, function) -> samples of what they build.
DYNAMIC: dict[tuple[str, str], Callable[[], list[re.Pattern[str]]]] = {
    ("prm/rewards/steps.py", "_padding_patterns"): lambda: list(
        importlib.import_module("prm.rewards.steps")._padding_patterns(("<pad>", "<|im_end|>", "</s>", "<s>"))),
}


def _modules() -> Iterator[tuple[str, Path]]:
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            yield ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"), path


def _re_calls(tree: ast.Module) -> Iterator[tuple[ast.Call, list[ast.AST]]]:
    """Every call of a ``re`` function (``re.compile(...)``, ``from re import sub``), with its enclosing nodes."""
    aliases = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names
               if a.name == "re"}
    direct = {a.asname or a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module == "re"
              for a in n.names if a.name in _RE_FUNCTIONS}

    def walk(node: ast.AST, stack: list[ast.AST]) -> Iterator[tuple[ast.Call, list[ast.AST]]]:
        if isinstance(node, ast.Call):
            f = node.func
            if (isinstance(f, ast.Attribute) and f.attr in _RE_FUNCTIONS and isinstance(f.value, ast.Name)
                    and f.value.id in aliases) or (isinstance(f, ast.Name) and f.id in direct):
                yield node, stack
        for child in ast.iter_child_nodes(node):
            yield from walk(child, [*stack, node])

    yield from walk(tree, [])


def _collect(value: object, found: dict[str, re.Pattern[str]], depth: int = 0) -> None:
    if isinstance(value, re.Pattern) and isinstance(value.pattern, str):
        found.setdefault(f"{value.pattern!r}/{value.flags}", value)
    elif depth < 3 and isinstance(value, tuple | list | frozenset | set):
        for item in value:
            _collect(item, found, depth + 1)
    elif depth < 3 and isinstance(value, dict):
        for item in value.values():
            _collect(item, found, depth + 1)


def _discover() -> tuple[dict[str, re.Pattern[str]], list[str]]:
    """Patterns by id (``module.NAME[i]``), and the call sites this test cannot reach."""
    patterns: dict[str, re.Pattern[str]] = {}
    unreachable: list[str] = []
    for module, path in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        calls = list(_re_calls(tree))
        if not calls:
            continue
        rel = path.relative_to(ROOT).as_posix()
        dynamic_done: set[str] = set()
        for call, stack in calls:
            functions = [n.name for n in stack if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
            inside = functions or [n for n in stack if isinstance(n, ast.Lambda)]
            if not inside:
                continue  # module level: found by importing the module
            pattern_arg = call.args[0] if call.args else None
            if isinstance(pattern_arg, ast.Name) and pattern_arg.id.lstrip("_").isupper():
                continue  # a module-level constant pattern: found by importing the module
            key = (rel, functions[0] if functions else "<lambda>")
            if key in DYNAMIC:
                if key[1] not in dynamic_done:
                    dynamic_done.add(key[1])
                    for i, p in enumerate(DYNAMIC[key]()):
                        patterns[f"{module}.{key[1]}()[{i}]"] = p
                continue
            unreachable.append(f"{rel}:{call.lineno} compiles a regex inside {key[1]}(): compile it at module "
                               "level (or add a builder of samples to DYNAMIC) so this test runs it")
        mod = importlib.import_module(module)
        for name, value in sorted(vars(mod).items()):
            found: dict[str, re.Pattern[str]] = {}
            _collect(value, found)
            for i, p in enumerate(found.values()):
                patterns.setdefault(f"{module}.{name}" + (f"[{i}]" if len(found) > 1 else ""), p)
    # An imported name (from x import _P) is the same object as its owner's; keep the first id of each.
    unique: dict[str, re.Pattern[str]] = {}
    seen: set[int] = set()
    for pid, p in patterns.items():
        if id(p) not in seen:
            seen.add(id(p))
            unique[pid] = p
    return unique, unreachable


# --- hostile inputs from a pattern's syntax tree ------------------------------------------------------------

_CANDIDATES = " \n\t1a0A.-,:=+*/$#<>{}()[]\\_x9Z\r"


def _class_chars(items: list, flags: int) -> list[str]:
    """Characters that one ``[...]``-like node matches, from a fixed candidate list (at most 2)."""
    probe = re.compile(_class_regex(items), flags)
    return [c for c in _CANDIDATES if probe.fullmatch(c)][:2]


def _class_regex(items: list) -> str:
    parts, negate = [], False
    for op, arg in items:
        if op is sre_constants.NEGATE:
            negate = True
        elif op is sre_constants.LITERAL:
            parts.append(re.escape(chr(arg)))
        elif op is sre_constants.RANGE:
            parts.append(f"{re.escape(chr(arg[0]))}-{re.escape(chr(arg[1]))}")
        elif op is sre_constants.CATEGORY:
            parts.append({"CATEGORY_DIGIT": r"\d", "CATEGORY_NOT_DIGIT": r"\D", "CATEGORY_SPACE": r"\s",
                          "CATEGORY_NOT_SPACE": r"\S", "CATEGORY_WORD": r"\w", "CATEGORY_NOT_WORD": r"\W"}.get(
                              str(arg), r"\s"))
    return "[" + ("^" if negate else "") + "".join(parts) + "]" if parts else "[^\\s\\S]"


class _Walker:
    """Walks a parsed pattern, keeping one literal text that reaches each point, and records hostile inputs."""

    def __init__(self, flags: int) -> None:
        self.flags = flags
        self.prefixes: list[str] = []  # text that leads to a repeat
        self.runs: list[tuple[str, str]] = []  # (prefix, unit the repeat consumes)

    def sample(self, seq: list) -> str:
        """One short text the sequence matches (roughly: first branch, minimum repeats of at least one)."""
        out = []
        for op, arg in seq:
            if op is sre_constants.LITERAL:
                out.append(chr(arg))
            elif op is sre_constants.NOT_LITERAL:
                out.append("x" if chr(arg) != "x" else "y")
            elif op is sre_constants.ANY:
                out.append("a")
            elif op is sre_constants.IN:
                chars = _class_chars(arg, self.flags)
                out.append(chars[0] if chars else "")
            elif op is sre_constants.SUBPATTERN:
                out.append(self.sample(arg[-1]))
            elif op is sre_constants.ATOMIC_GROUP:
                out.append(self.sample(arg))
            elif op is sre_constants.BRANCH:
                out.append(self.sample(arg[1][0]))
            elif op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT, sre_constants.POSSESSIVE_REPEAT):
                lo, _hi, item = arg
                out.append(self.sample(item) * max(lo, 1))
        return "".join(out)

    def walk(self, seq: list, prefix: str) -> str:
        """Record hostile points inside ``seq`` reached after ``prefix``; return the prefix after ``seq``."""
        for op, arg in seq:
            if op is sre_constants.SUBPATTERN:
                prefix = self.walk(arg[-1], prefix)
            elif op is sre_constants.ATOMIC_GROUP:
                prefix = self.walk(arg, prefix)
            elif op is sre_constants.BRANCH:
                for branch in arg[1]:
                    self.walk(branch, prefix)
                prefix += self.sample(arg[1][0])
            elif op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT, sre_constants.POSSESSIVE_REPEAT):
                _lo, hi, item = arg
                units = {self.sample(item)}
                if len(item) == 1 and item[0][0] is sre_constants.IN:
                    units |= set(_class_chars(item[0][1], self.flags))
                if hi > 1:
                    self.prefixes.append(prefix)
                    self.runs += [(prefix, u) for u in sorted(units) if u]
                self.walk(item, prefix)
                prefix += self.sample([(op, arg)])
            else:
                prefix += self.sample([(op, arg)])
        return prefix


def hostile_inputs(pattern: re.Pattern[str]) -> dict[str, str]:
    """About a megabyte each: runs after every prefix that leads to a repeat, and each prefix repeated."""
    walker = _Walker(pattern.flags)
    full = walker.walk(list(sre_parse.parse(pattern.pattern, pattern.flags)), "")
    inputs: dict[str, str] = {}

    def add(name: str, text: str) -> None:
        if len(inputs) < _MAX_INPUTS and text not in inputs.values():
            inputs[name] = text

    for prefix, unit in walker.runs:  # the inputs that find backtracking: a long run where a repeat reads
        add(f"{prefix[-24:]!r} + run {unit!r}", prefix + unit * (MB // len(unit)) + "\x00")
    for prefix in [*walker.prefixes, full]:
        for tail in ("", " ", "\n"):
            unit = prefix + tail
            if unit:
                add(f"({unit[-24:]!r}) repeated", unit * max(1, MB // len(unit)))
    for unit in (" ", "\n", "1", "a", "\r\n", "{", "<", "$", "#"):
        add(f"run {unit!r}", unit * (MB // len(unit)))
    return inputs


PATTERNS, UNREACHABLE = _discover()


def test_every_regex_call_site_is_reachable_by_this_test() -> None:
    assert not UNREACHABLE, "\n".join(UNREACHABLE)


def test_the_discovery_finds_the_known_model_text_patterns() -> None:
    ids = set(PATTERNS)
    for expected in ("prm.labeling.judge._ANSWER", "verifiers.extract._ANSWER_LINE", "prm.format.steps._LINE_STEP",
                     "warehouse.store._PARTITION_VALUE", "prm.rewards.steps._padding_patterns()[0]"):
        assert expected in ids, f"{expected} not found among {len(ids)} patterns"
    assert len(PATTERNS) >= 40


def _measure(pattern_id: str, conn: Connection) -> None:
    """In a child process whose CPU time is capped, so a catastrophic pattern ends in seconds, not hours."""
    pattern = PATTERNS[pattern_id]
    inputs = hostile_inputs(pattern)
    budget = CPU_S_PER_MB * sum(len(t) for t in inputs.values()) / MB
    cap = int(budget) + 3  # whole CPU seconds; generating the inputs costs well under a second
    resource.setrlimit(resource.RLIMIT_CPU, (cap, cap + 1))
    spent: dict[str, float] = {}
    for name, text in inputs.items():
        conn.send(("start", name))
        start = time.process_time()
        pattern.findall(text)  # every match from every start, in C: the cost is the regex's own
        spent[name] = time.process_time() - start
    conn.send(("done", (spent, budget)))


@pytest.mark.parametrize("pattern_id", sorted(PATTERNS))
def test_regex_is_linear_on_hostile_text(pattern_id: str) -> None:
    pattern = PATTERNS[pattern_id]
    parent, child = multiprocessing.get_context("fork").Pipe(duplex=False)
    proc = multiprocessing.get_context("fork").Process(target=_measure, args=(pattern_id, child))
    proc.start()
    child.close()
    last, result = "", None
    while True:
        try:
            kind, value = parent.recv()
        except EOFError:
            break
        if kind == "start":
            last = value
        else:
            result = value
    proc.join()
    assert result is not None, (f"{pattern_id} ({pattern.pattern!r}) ran past its CPU cap (exit {proc.exitcode}) "
                                f"on hostile input {last}: it backtracks; make its repeats possessive or bounded")
    spent, budget = result
    worst = max(spent, key=spent.__getitem__)
    assert sum(spent.values()) < budget, (
        f"{pattern_id} ({pattern.pattern!r}) spent {sum(spent.values()):.2f} CPU s on {len(spent)} hostile inputs "
        f"(budget {budget:.1f} s); worst {worst}: {spent[worst]:.2f} s")
