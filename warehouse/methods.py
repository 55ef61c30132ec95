"""The method table: every label method's name, kind and display name, in one place.

``step_labels.method`` holds one of these names. The ``labeled_steps`` view pivots one pair of columns per
method (``<name>_soft``, ``<name>_hard``), and the asset checks, the assets and the audit iterate this
table instead of keeping their own lists.
"""

from __future__ import annotations

from dataclasses import dataclass

# What produced a label: sampled continuations, a formal tool, an LLM judge, an agreement of other
# methods, a person, or a trained model (a PRM's own step predictions).
KINDS = ("rollout", "formal", "judge", "consensus", "human", "model")


@dataclass(frozen=True)
class Method:
    """One label method."""

    name: str  # the value in step_labels.method and the column prefix in labeled_steps
    kind: str  # one of KINDS
    display: str  # for tables and plots

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"method {self.name!r} has kind {self.kind!r}; use one of {KINDS}")


METHODS: tuple[Method, ...] = (
    Method("mc", "rollout", "Monte-Carlo rollouts (Math-Shepherd)"),
    Method("mc_early_stop", "rollout", "Monte-Carlo, stop at first MC = 0"),
    Method("omegaprm", "rollout", "OmegaPRM binary search"),
    Method("progress", "rollout", "Step progress MC(k) - MC(k-1) from the MC rollouts (PAV)"),
    Method("sympy", "formal", "SymPy arithmetic check"),
    Method("z3", "formal", "Z3 logic check"),
    Method("sympy_ref", "formal", "SymPy + the reference solution's values"),
    Method("judge", "judge", "LLM judge, majority of k votes"),
    Method("consensus", "consensus", "Consensus of methods"),
    Method("human", "human", "Human annotation (imported)"),
)
_BY_NAME = {m.name: m for m in METHODS}

# The names code refers to. ``TRUTH`` is the pseudo-method no labeler writes: ``steps.is_correct_truth``, the
# exact step truth a generated task defines, read and compared like any method's labels.
TRUTH = "truth"
JUDGE = "judge"
CONSENSUS = "consensus"
# The methods whose labels read the problem's gold answer (rollouts are graded against it; consensus and progress
# build on MC): on ProcessBench-style audits they are reported apart from methods that see only problem and steps.
REFERENCE_METHODS: tuple[str, ...] = ("mc", "mc_early_stop", "omegaprm", "progress", "sympy_ref", "consensus")
# Every name a training set or an audit can read: the table's methods and the truth.
LABEL_SOURCES: tuple[str, ...] = (*(m.name for m in METHODS), TRUTH)
# The label-source comparison's default: exact truth (the ceiling), the rollout methods, the fine-tuned judge and
# the consensus filter.
COMPARED_METHODS: tuple[str, ...] = (TRUTH, "mc", "omegaprm", "progress", JUDGE, CONSENSUS)


def method(name: str) -> Method:
    """The method called ``name``.

    >>> method("z3").kind
    'formal'
    """
    if name not in _BY_NAME:
        raise ValueError(f"label method {name!r} is not in the method table {sorted(_BY_NAME)}; "
                         "add it to warehouse/methods.py (name, kind, display name) before writing its labels")
    return _BY_NAME[name]


def method_names(kind: str | None = None) -> tuple[str, ...]:
    """Names of every method, or of one kind.

    >>> method_names("formal")
    ('sympy', 'z3', 'sympy_ref')
    """
    if kind is not None and kind not in KINDS:
        raise ValueError(f"kind {kind!r} is unknown; use one of {KINDS}")
    return tuple(m.name for m in METHODS if kind is None or m.kind == kind)
