"""Off-policy perturbations: does a PRM score a wrong step its policy would rarely write below the right one?

Step sensitivity (:mod:`prm.metrics.sensitivity`) compares two samples of the policy; a PRM can pass it and
still score text the policy never writes ("hello world", a step from another problem) above the right step.
This suite takes held-out right prefixes (right solutions, and the right prefix of wrong ones), replaces one
right step by a perturbation of a known kind and pairs it with the right step after the same prefix:

* :data:`WRONG_KINDS`, wrong by exact truth: arithmetic slips of two sizes, a wrong operand, a flipped
  operator, a wrong carried total, the previous step repeated, the next step written early (one skipped), a
  step from another problem, nonsense, an empty step, a very long one, a wrong value in another number format.
* :data:`REFORMATTED_KINDS`, right but written differently (spaces, extra words, two operations on one line, a
  decimal point): reported apart, with no goal.

Per kind: ``detection``, the share of pairs whose perturbed step scores below the right one (ties 1/2), and
``below_threshold``, the share scored below the validation threshold, each with a 95% interval over problems.
Arithmetic kinds need steps written as ``a op b = c`` (the embedded policy's layout); the text kinds apply to
any step.
"""

from __future__ import annotations

import json
import random
import re
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from prm.format import ContextOverflowError
from prm.metrics import problem_bootstrap_ci
from prm.reports import metric_row

WRONG_KINDS = ("slip_small", "slip_large", "wrong_operand", "flipped_operator", "wrong_carry", "repeated_step",
               "skipped_step", "other_problem", "nonsense", "empty", "very_long", "other_format")
REFORMATTED_KINDS = ("spaced", "extra_words", "merged_ops", "decimal")
NONSENSE = ("hello world", "thanks!", "I love this problem", "asdf qwerty zxcv", "The quick brown fox jumps.")
VERY_LONG_CHARS = (200, 400)  # a very long step: random text of this many characters (the policy writes ~10)
_LONG_ALPHABET = "0123456789+-=* abcdefghijklmnopqrstuvwxyz"
_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
          "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty")
# One binary operation as the embedded policy writes it; bounded digit runs keep the match small. ``(?<!\d)`` and
# possessive runs: a match starts where a number starts, so a run of digits is read once, not 18 times per
# position (0.02 vs 0.53 CPU s on a megabyte of digits), and "1234567890123456789+1 = 2" is no step.
_STEP = re.compile(r"(?<!\d)(-?\d{1,18}+)([+*-])(\d{1,18}+) = (-?\d{1,18}+)")
_OPS: dict[str, Callable[[int, int], int]] = {"+": lambda a, b: a + b, "-": lambda a, b: a - b,
                                              "*": lambda a, b: a * b}
ScoreFn = Callable[[Sequence[tuple[str, Sequence[str]]]], list[list[float]]]


@dataclass(frozen=True)
class Perturbation:
    """One right step after a right prefix, and the step that replaces it."""

    problem_id: str
    prefix: tuple[str, ...]
    right: str
    perturbed: str
    kind: str


@dataclass(frozen=True)
class Equation:
    """``a op b = c``, a step of the embedded policy's layout."""

    a: int
    op: str
    b: int
    c: int

    def text(self, c: int | str | None = None) -> str:
        return f"{self.a}{self.op}{self.b} = {self.c if c is None else c}"


def parse_equation(step: str) -> Equation | None:
    """The step as ``a op b = c`` when it is written so (true or not), else None.

    >>> parse_equation("11-6 = 5"), parse_equation("So 11-6 = 5") is None
    (Equation(a=11, op='-', b=6, c=5), True)
    """
    m = _STEP.fullmatch(step.strip()) if len(step) <= 80 else None
    return None if m is None else Equation(int(m[1]), m[2], int(m[3]), int(m[4]))


def _nonzero(rng: random.Random, low: int, high: int) -> int:
    return rng.choice([d for d in range(-high, high + 1) if low <= abs(d) <= high])


def _arithmetic(eq: Equation, rng: random.Random) -> dict[str, str]:
    """The arithmetic wrong kinds of a right step ``eq`` (each one's value differs from ``eq.c``)."""
    out = {"slip_small": eq.text(eq.c + _nonzero(rng, 1, 2)), "slip_large": eq.text(eq.c + _nonzero(rng, 10, 99))}
    b = rng.choice([x for x in range(1, 10) if x != eq.b]) if eq.b < 10 else eq.b + _nonzero(rng, 1, 5)
    out["wrong_operand"] = Equation(eq.a, eq.op, b, _OPS[eq.op](eq.a, b)).text()
    flipped = {"+": "-", "-": "+", "*": "+"}[eq.op]
    if _OPS[flipped](eq.a, eq.b) != eq.c:
        out["flipped_operator"] = Equation(eq.a, flipped, eq.b, _OPS[flipped](eq.a, eq.b)).text()
    a = eq.a + _nonzero(rng, 1, 3)
    if _OPS[eq.op](a, eq.b) != eq.c:
        out["wrong_carry"] = Equation(a, eq.op, eq.b, _OPS[eq.op](a, eq.b)).text()
    wrong = eq.c + _nonzero(rng, 1, 2)
    out["other_format"] = eq.text(_WORDS[wrong] if 0 <= wrong < len(_WORDS) else f"{eq.c}.5")
    return out


def _reformatted(eq: Equation, next_step: str | None, rng: random.Random) -> dict[str, str]:
    out = {"spaced": f"{eq.a} {eq.op} {eq.b} = {eq.c}",
           "extra_words": rng.choice((f"So {eq.text()}.", f"{eq.text()} points", f"Then {eq.text()}")),
           "decimal": eq.text(f"{eq.c}.0")}
    nxt = parse_equation(next_step) if next_step is not None else None
    if nxt is not None and nxt.a == eq.c:
        out["merged_ops"] = f"{eq.a}{eq.op}{eq.b}{nxt.op}{nxt.b} = {nxt.c}"
    return out


def perturb(prefix: Sequence[str], right: str, next_step: str | None, other: str | None, rng: random.Random
            ) -> dict[str, str]:
    """Every kind that applies to ``right`` after ``prefix``: kind -> the step that replaces it.

    ``next_step`` is the right step after ``right`` in the same solution (for the skipped and merged kinds),
    ``other`` a right step of another problem. A kind is left out where it would not be wrong (or, for the
    reformatted kinds, not right), e.g. a repeated step equal to the right one.

    >>> kinds = perturb(["7-1 = 6", "6+5 = 11"], "11-6 = 5", "5+4 = 9", "3+3 = 6", random.Random(0))
    >>> kinds["repeated_step"], kinds["skipped_step"], kinds["merged_ops"], kinds["empty"]
    ('6+5 = 11', '5+4 = 9', '11-6+4 = 9', '')
    """
    eq = parse_equation(right)
    out: dict[str, str] = {}
    if eq is not None:
        out.update(_arithmetic(eq, rng))
    value = eq.c if eq is not None else None

    def differs(step: str | None) -> bool:
        parsed = parse_equation(step) if step is not None else None
        return step is not None and step.strip() != right.strip() and (parsed is None or parsed.c != value)

    if prefix and differs(prefix[-1]):
        out["repeated_step"] = prefix[-1]
    if differs(next_step):
        out["skipped_step"] = next_step  # type: ignore[assignment]
    if differs(other):
        out["other_problem"] = other  # type: ignore[assignment]
    out["nonsense"] = rng.choice(NONSENSE)
    out["empty"] = ""
    out["very_long"] = "".join(rng.choice(_LONG_ALPHABET) for _ in range(rng.randint(*VERY_LONG_CHARS)))
    if eq is not None:
        out.update(_reformatted(eq, next_step, rng))
    return out


def _right_steps(solution: Mapping[str, Any]) -> int:
    """How many leading steps of ``solution`` are right (its first error, or all of them)."""
    first = solution["first_error"]
    return len(solution["steps"]) if first is None or first < 0 else first


def perturbation_pairs(solutions: Sequence[Mapping[str, Any]], *, positions: int = 1, seed: int = 0
                       ) -> list[Perturbation]:
    """Perturbed pairs from held-out ``solutions`` (mappings with ``problem_id``, ``steps``, ``first_error``):
    per problem, ``positions`` right steps (of a right solution where one exists, else of the longest right
    prefix), each paired with every kind that applies. Deterministic in ``seed``.

    >>> sols = [{"problem_id": "p", "steps": ["1+2 = 3", "3+4 = 7"], "first_error": -1},
    ...         {"problem_id": "q", "steps": ["2+2 = 4"], "first_error": -1}]
    >>> pairs = perturbation_pairs(sols)
    >>> sorted({p.problem_id for p in pairs}), all(p.right != p.perturbed for p in pairs)
    (['p', 'q'], True)
    """
    rng = random.Random(seed)
    by_problem: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for s in solutions:
        if s["steps"] and s["first_error"] is not None and _right_steps(s) > 0:
            by_problem[s["problem_id"]].append(s)
    pool = {pid: [st for s in group for st in s["steps"][: _right_steps(s)]] for pid, group in by_problem.items()}
    ids = sorted(by_problem)
    pairs: list[Perturbation] = []
    for pid in ids:
        group = sorted(by_problem[pid], key=lambda s: (-(s["first_error"] is not None and s["first_error"] < 0),
                                                        -_right_steps(s), str(s.get("solution_id", ""))))
        solution = group[0]
        n_right = _right_steps(solution)
        for k in sorted(rng.sample(range(n_right), min(positions, n_right))):
            steps = solution["steps"]
            others = [o for o in ids if o != pid]
            other = rng.choice(pool[rng.choice(others)]) if others else None
            nxt = steps[k + 1] if k + 1 < n_right else None
            for kind, text in perturb(steps[:k], steps[k], nxt, other, rng).items():
                pairs.append(Perturbation(pid, tuple(steps[:k]), steps[k], text, kind))
    return pairs


def score_perturbations(score: ScoreFn, questions: Mapping[str, str], pairs: Sequence[Perturbation]
                        ) -> tuple[list[float], list[float]]:
    """(right, perturbed) score of each pair's replaced step, from ``score(items) -> list[list[float]]`` (a
    scorer's ``score_batch``): each distinct right step is scored once."""
    rights = list(dict.fromkeys((p.problem_id, p.prefix, p.right) for p in pairs))
    items = [(questions[pid], [*prefix, step]) for pid, prefix, step in rights]
    items += [(questions[p.problem_id], [*p.prefix, p.perturbed]) for p in pairs]
    scores = [s[-1] for s in score(items)] if items else []
    right_of = dict(zip(rights, scores[: len(rights)], strict=True))
    return [right_of[(p.problem_id, p.prefix, p.right)] for p in pairs], scores[len(rights):]


def fitting_pairs(score: ScoreFn, questions: Mapping[str, str], pairs: Sequence[Perturbation]
                  ) -> tuple[list[Perturbation], list[float], list[float]]:
    """:func:`score_perturbations` of the pairs a PRM's context holds: when the batch overflows it, the
    ``very_long`` pairs are left out, and if it still does, each pair is tried on its own."""
    try:
        return list(pairs), *score_perturbations(score, questions, pairs)
    except ContextOverflowError:
        pass
    shorter = [p for p in pairs if p.kind != "very_long"]
    try:
        return shorter, *score_perturbations(score, questions, shorter)
    except ContextOverflowError:
        pass
    kept, right, perturbed = [], [], []
    for pair in shorter:
        try:
            (r,), (x,) = score_perturbations(score, questions, [pair])
        except ContextOverflowError:
            continue
        kept.append(pair)
        right.append(r)
        perturbed.append(x)
    return kept, right, perturbed


PerturbationRun = tuple[Sequence[Perturbation], Sequence[float], Sequence[float], float]  # + threshold


def _share(groups: list[list[float]]) -> float:
    return sum(map(sum, groups)) / sum(map(len, groups))


def _with_ci(per_problem: Mapping[str, list[float]], seed: int) -> tuple[float | None, list[float] | None]:
    groups = [per_problem[p] for p in sorted(per_problem)]
    if not groups:
        return None, None
    ci = problem_bootstrap_ci(groups, _share, seed=seed)
    return round(_share(groups), 4), None if ci is None else [round(ci[0], 4), round(ci[1], 4)]


def perturbation_report(runs: Sequence[PerturbationRun], *, seed: int = 0) -> dict[str, Any]:
    """Per kind over every run (a seed's pairs, right scores, perturbed scores and validation threshold):
    ``detection`` (perturbed below right, ties 1/2), ``below_threshold`` and, for the right steps,
    ``right_at_or_above_threshold``; each with a 95% interval that resamples problems with all seeds' pairs of a
    problem together. Reformatted kinds sit under ``reformatted`` with ``at_or_above_threshold`` and
    ``below_right`` (scored below the right step).

    >>> pairs = [Perturbation("p", (), "1+2 = 3", "hello world", "nonsense"),
    ...          Perturbation("q", (), "2+2 = 4", "hello world", "nonsense")]
    >>> report = perturbation_report([(pairs, [0.9, 0.6], [0.1, 0.7], 0.5)])
    >>> report["nonsense"]["detection"], report["nonsense"]["below_threshold"], report["right_at_or_above_threshold"]
    (0.5, 0.5, 1.0)
    """
    detect: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    below: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    right_ok: dict[str, list[float]] = defaultdict(list)
    for pairs, right, perturbed, threshold in runs:
        seen: set[tuple] = set()
        for p, r, x in zip(pairs, right, perturbed, strict=True):
            detect[p.kind][p.problem_id].append(1.0 if x < r else 0.5 if x == r else 0.0)
            below[p.kind][p.problem_id].append(float(x < threshold))
            if (p.problem_id, p.prefix, p.right) not in seen:
                seen.add((p.problem_id, p.prefix, p.right))
                right_ok[p.problem_id].append(float(r >= threshold))
    out: dict[str, Any] = {}
    for kind in WRONG_KINDS:
        if kind in detect:
            (d, d_ci), (b, b_ci) = _with_ci(detect[kind], seed), _with_ci(below[kind], seed)
            out[kind] = {"detection": d, "detection_ci": d_ci, "below_threshold": b, "below_threshold_ci": b_ci,
                         "n_pairs": sum(map(len, detect[kind].values())), "n_problems": len(detect[kind])}
    out["reformatted"] = {}
    for kind in REFORMATTED_KINDS:
        if kind in detect:
            (d, d_ci), (b, b_ci) = _with_ci(detect[kind], seed), _with_ci(below[kind], seed)
            out["reformatted"][kind] = {"at_or_above_threshold": None if b is None else round(1 - b, 4),
                                        "below_right": d, "below_right_ci": d_ci,
                                        "n_pairs": sum(map(len, detect[kind].values()))}
    value, ci = _with_ci(right_ok, seed)
    out["right_at_or_above_threshold"], out["right_at_or_above_threshold_ci"] = value, ci
    return out


def worst_detection(report: Mapping[str, Any]) -> tuple[str | None, float | None]:
    """The wrong kind detected least often in a :func:`perturbation_report`, and its detection.

    >>> worst_detection({"nonsense": {"detection": 0.4}, "empty": {"detection": 0.9}, "reformatted": {}})
    ('nonsense', 0.4)
    """
    kinds = [(v["detection"], k) for k, v in report.items() if k in WRONG_KINDS and v["detection"] is not None]
    return (min(kinds)[1], min(kinds)[0]) if kinds else (None, None)


MAX_PROBLEMS = 200  # test problems a suite draws pairs from (~16 pairs each): intervals of ~+-0.03 at 0.95


def sample_problems(solutions: Sequence[Mapping[str, Any]], limit: int = MAX_PROBLEMS, seed: int = 0
                    ) -> list[Mapping[str, Any]]:
    """The solutions of at most ``limit`` problems, drawn by ``seed`` (all of them when there are fewer).

    >>> len(sample_problems([{"problem_id": str(i % 5)} for i in range(20)], limit=2))
    8
    """
    ids = sorted({s["problem_id"] for s in solutions})
    keep = set(ids) if len(ids) <= limit else set(random.Random(seed).sample(ids, limit))
    return [s for s in solutions if s["problem_id"] in keep]


def perturbation_run(score: ScoreFn, solutions: Sequence[Mapping[str, Any]], threshold: float, *,
                     limit: int = MAX_PROBLEMS, seed: int = 0) -> PerturbationRun:
    """One scorer's :data:`PerturbationRun` on the held-out ``solutions`` (with ``question``): pairs from at most
    ``limit`` problems, scored in one batched call of ``score``."""
    chosen = sample_problems(solutions, limit, seed)
    pairs, right, perturbed = fitting_pairs(score, {s["problem_id"]: s["question"] for s in chosen},
                                            perturbation_pairs(chosen, seed=seed))
    return pairs, right, perturbed, threshold


def perturbation_rows(model: str, label_method: str | None, report: Mapping[str, Any], *, split: str,
                      experiment: str) -> list[dict[str, Any]]:
    """``prm_evaluations`` rows of a :func:`perturbation_report`: ``perturbation:<kind>`` (value: detection;
    detail: its interval, ``below_threshold`` and pair counts), ``reformatted:<kind>`` (value: share at or above
    the threshold) and ``right_at_or_above_threshold``."""
    rows = []
    for kind in WRONG_KINDS:
        if kind in report:
            r = report[kind]
            rows.append(metric_row(model, label_method, split, f"perturbation:{kind}", r["detection"], r["n_pairs"],
                                   ci=r["detection_ci"], below_threshold=r["below_threshold"],
                                   below_threshold_ci=r["below_threshold_ci"], problems=r["n_problems"]))
    for kind, r in report["reformatted"].items():
        rows.append(metric_row(model, label_method, split, f"reformatted:{kind}", r["at_or_above_threshold"],
                               r["n_pairs"], below_right=r["below_right"]))
    rows.append(metric_row(model, label_method, split, "right_at_or_above_threshold",
                           report["right_at_or_above_threshold"], 0, ci=report["right_at_or_above_threshold_ci"]))
    return [{"experiment": experiment, **row} for row in rows]


def columns_from_rows(rows: Sequence[Mapping[str, Any]], model: str, split: str) -> dict[str, Any]:
    """:func:`perturbation_columns` read back from a scorer's :func:`perturbation_rows` (``{}`` without them)."""
    report: dict[str, Any] = {"reformatted": {}}
    for r in rows:
        if r["model"] != model or r["split"] != split or r["value"] is None:  # None: no step truth to perturb
            continue
        detail = json.loads(r["detail_json"] or "{}")
        family, _, kind = r["metric"].partition(":")
        if family == "perturbation":
            report[kind] = {"detection": r["value"], "detection_ci": detail.get("ci"),
                            "below_threshold": detail.get("below_threshold")}
        elif family == "reformatted":
            report["reformatted"][kind] = {"at_or_above_threshold": r["value"],
                                           "below_right": detail.get("below_right")}
        elif r["metric"] == "right_at_or_above_threshold":
            report["right_at_or_above_threshold"], report["right_at_or_above_threshold_ci"] = r["value"], \
                detail.get("ci")
    return perturbation_columns(report) if len(report) > 1 else {}


_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def training_negative(prefix: Sequence[str], right: str, next_step: str | None, other: str | None,
                      rng: random.Random) -> tuple[str, str]:
    """One wrong replacement for a right step, of a kind drawn uniformly from those that apply, for a PRM to
    train on as a negative: ``(kind, step)``. Nonsense here is random words, never :data:`NONSENSE`, so the
    suite's nonsense pairs stay text the PRM never saw.

    >>> kind, step = training_negative(["7-1 = 6"], "6+5 = 11", None, None, random.Random(1))
    >>> kind in WRONG_KINDS and step != "6+5 = 11"
    True
    """
    kinds = {k: v for k, v in perturb(prefix, right, next_step, other, rng).items() if k in WRONG_KINDS}
    kind = rng.choice(sorted(kinds))
    if kind == "nonsense":
        words = [''.join(rng.choice(_LETTERS) for _ in range(rng.randint(2, 7))) for _ in range(rng.randint(1, 4))]
        return kind, " ".join(words)
    return kind, kinds[kind]


def perturbation_columns(report: Mapping[str, Any]) -> dict[str, Any]:
    """A :func:`perturbation_report` as comparison-row columns: ``perturbation`` (wrong kind ->
    ``{"detection", "detection_ci", "below_threshold"}``, and ``reformatted``: kind -> its share at or above the
    threshold and below the right step), ``right_at_or_above_threshold`` with ``_ci``, and ``worst_detection`` (the
    least-detected kind and its detection)."""
    kinds = {k: {"detection": v["detection"], "detection_ci": v["detection_ci"],
                 "below_threshold": v["below_threshold"]} for k, v in report.items() if k in WRONG_KINDS}
    kind, worst = worst_detection(report)
    return {"perturbation": {**kinds, "reformatted": dict(report.get("reformatted", {}))},
            "right_at_or_above_threshold": report.get("right_at_or_above_threshold"),
            "right_at_or_above_threshold_ci": report.get("right_at_or_above_threshold_ci"),
            "worst_detection": None if kind is None else {"kind": kind, "detection": worst}}


def perturbation_markdown(columns: Mapping[str, Any]) -> str:
    """The :func:`perturbation_columns` of one scorer as a markdown table: per kind, detection with its interval and
    the share below the threshold; the reformatted-right kinds and the right steps' share at or above it last.

    >>> print(perturbation_markdown(perturbation_columns(perturbation_report(
    ...     [([Perturbation("p", (), "1+2 = 3", "hello", "nonsense")], [0.9], [0.1], 0.5)]))))
    | kind | detection [95% CI] | below threshold |
    |---|---|---|
    | nonsense | 1.000 [1.00, 1.00] | 1.000 |
    | right steps at or above the threshold | - | 1.000 [1.00, 1.00] |
    """
    def num(value: float | None, ci: Sequence[float] | None = None) -> str:
        if value is None:
            return "-"
        return f"{value:.3f}" + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")

    lines = ["| kind | detection [95% CI] | below threshold |", "|---|---|---|"]
    for kind, r in columns.get("perturbation", {}).items():
        if kind != "reformatted":
            lines.append(f"| {kind} | {num(r['detection'], r['detection_ci'])} | {num(r['below_threshold'])} |")
    for kind, r in columns.get("perturbation", {}).get("reformatted", {}).items():
        lines.append(f"| {kind} (right, reformatted) | below right: {num(r.get('below_right'))} | "
                     f"at or above: {num(r.get('at_or_above_threshold'))} |")
    lines.append(f"| right steps at or above the threshold | - | "
                 f"{num(columns.get('right_at_or_above_threshold'), columns.get('right_at_or_above_threshold_ci'))} |")
    return "\n".join(lines)
