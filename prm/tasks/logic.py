"""Seeded formal-logic problems (FoVer-style): facts, rules, a question, a gold derivation whose steps
are ``premises -> conclusion`` lines, and corrupted derivations with known wrong steps.

A step is true (:func:`step_truth`) when every premise is a given fact or rule or the conclusion of an
earlier true step, and Z3 proves the conclusion from them (:func:`verifiers.logic.check_logic_step`).
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass

from verifiers import LogicParseError, check_logic_step, format_formula, parse_formula, parse_step

__all__ = ["LogicConfig", "LogicProblem", "corrupt_steps", "generate_logic_problem", "step_truth"]

_ATOMS = tuple("ABCDEFGHJKLMNPQRSTUVWXYZ")  # no I/O: they read as 1/0 in some fonts


@dataclass(frozen=True)
class LogicConfig:
    """Size of generated problems."""

    n_atoms: int = 8  # atoms per problem; FoVer's propositional tasks use 5-10
    n_facts: int = 3  # given facts ("A is true"/"B is false")
    chain_length: int = 3  # derivation steps in the gold solution
    n_distractors: int = 2  # rules whose premises never hold: the solver must not use them

    def __post_init__(self) -> None:
        needed = self.n_facts + self.chain_length + 2
        if not 0 < needed <= self.n_atoms <= len(_ATOMS):
            raise ValueError(
                f"n_atoms={self.n_atoms} must be in [{needed}, {len(_ATOMS)}] for n_facts={self.n_facts} "
                f"and chain_length={self.chain_length}; raise n_atoms or shorten the chain"
            )


@dataclass(frozen=True)
class LogicProblem:
    """One problem: ``question`` lists facts and rules and asks about ``target``.

    ``answer`` is ``"True"``/``"False"``; ``problem_id`` is a stable hash of the question.
    """

    problem_id: str
    question: str
    facts: tuple[str, ...]
    rules: tuple[str, ...]
    target: str
    gold_steps: tuple[str, ...]
    answer: str


def _literal(atom: str, value: bool) -> str:
    return f"{atom} is {'true' if value else 'false'}"


def _cond(atom: str, value: bool) -> str:
    return atom if value else f"not {atom}"


def generate_logic_problem(seed: int, config: LogicConfig | None = None) -> LogicProblem:
    """A random problem with a gold derivation; the same seed gives the same problem.

    >>> p = generate_logic_problem(0)
    >>> p == generate_logic_problem(0), len(p.gold_steps), p.answer in ("True", "False")
    (True, 3, True)
    >>> step_truth(p, list(p.gold_steps))
    [True, True, True]
    """
    cfg = config or LogicConfig()
    rng = random.Random(seed)
    atoms = rng.sample(_ATOMS, cfg.n_atoms)
    known = {a: rng.random() < 0.7 for a in atoms[: cfg.n_facts]}
    facts = [_literal(a, v) for a, v in known.items()]
    rules, steps = [], []
    fresh = atoms[cfg.n_facts :]
    for k in range(cfg.chain_length):
        used = rng.sample(sorted(known), min(len(known), rng.choice((1, 2))))
        new, value = fresh[k], rng.random() < 0.6
        condition = " and ".join(_cond(a, known[a]) for a in used)
        rule = f"if {condition} then {_cond(new, value)}"
        rules.append(rule)
        steps.append(", ".join([*(_literal(a, known[a]) for a in used), rule]) + f" -> {_literal(new, value)}")
        known[new] = value
    unknown = fresh[cfg.chain_length :]
    for _ in range(cfg.n_distractors):  # a premise contradicts a known value, or is never derivable
        a = rng.choice(sorted(known))
        rules.append(f"if {_cond(a, not known[a])} then {_cond(rng.choice(unknown), rng.random() < 0.5)}")
    rng.shuffle(rules)
    target = fresh[cfg.chain_length - 1]
    question = (
        "Facts: " + "; ".join(facts) + ".\nRules: " + "; ".join(rules) + f".\nQuestion: is {target} true?"
    )
    digest = hashlib.sha256(question.encode()).hexdigest()[:16]
    return LogicProblem(
        problem_id=f"logic-{digest}",
        question=question,
        facts=tuple(facts),
        rules=tuple(rules),
        target=target,
        gold_steps=tuple(steps),
        answer="True" if known[target] else "False",
    )


def _canonical(text: str) -> str | None:
    try:
        return format_formula(parse_formula(text))
    except LogicParseError:
        return None


def step_truth(problem: LogicProblem, steps: list[str]) -> list[bool]:
    """Per step: premises are given or derived by earlier true steps, and the conclusion follows (Z3).

    A step that cites an unproven premise is false even when the implication itself is valid.
    """
    available = {c for c in map(_canonical, [*problem.facts, *problem.rules]) if c is not None}
    truth = []
    for step in steps:
        try:
            premises, conclusion = parse_step(step)
        except LogicParseError:
            truth.append(False)
            continue
        grounded = all(format_formula(p) in available for p in premises)
        ok = grounded and check_logic_step(step).status == "correct"
        truth.append(ok)
        if ok:
            available.add(format_formula(conclusion))
    return truth


def corrupt_steps(problem: LogicProblem, seed: int) -> tuple[list[str], int]:
    """The gold steps with one step made wrong, and the index of that step.

    Corruptions: flip the conclusion, drop a needed premise, conclude an unrelated atom, or cite a
    fact the problem never gave.

    >>> p = generate_logic_problem(1)
    >>> steps, bad = corrupt_steps(p, seed=7)
    >>> step_truth(p, steps)[bad]
    False
    """
    rng = random.Random(seed)
    steps = list(problem.gold_steps)
    index = rng.randrange(len(steps))
    premises_text, conclusion_text = steps[index].split(" -> ")
    premises = premises_text.split(", ")
    atom, _, value = conclusion_text.partition(" is ")
    kind = rng.choice(("flip", "drop", "other", "hallucinate"))
    if kind == "drop" and len(premises) > 1:
        premises.pop(rng.randrange(len(premises) - 1))  # keep the rule, lose a fact it needs
    elif kind == "other":
        in_question = {ch for ch in problem.question if ch in _ATOMS}
        others = sorted(in_question - {atom, *premises_text.replace(",", " ").split()})
        conclusion_text = _literal(rng.choice(others) if others else atom, value != "true")
    elif kind == "hallucinate":
        premises.insert(0, _literal(atom, value == "true"))  # assumes what it concludes
    else:
        conclusion_text = _literal(atom, value != "true")
    steps[index] = ", ".join(premises) + " -> " + conclusion_text
    return steps, index
