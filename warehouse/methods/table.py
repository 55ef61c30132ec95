"""The method table: every label method's name, kind, display name, recipe key and asset, in one place.

``step_labels.method`` holds one of these names. The ``labeled_steps`` view pivots one pair of columns per
method (``<name>_soft``, ``<name>_hard``); the labeler registry (``prm/labeling/registry.py``), the recipe's
``labels.methods`` vocabulary, the assets that write the labels, their checks and the audit all read this table
instead of keeping their own lists (docs/how-to/add-label-method.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# What produced a label: sampled continuations, a formal tool, an LLM judge, an agreement of other
# methods, a person, or a trained model (a PRM's own step predictions).
KINDS = ("rollout", "formal", "judge", "consensus", "human", "model")
# Kinds no labeler computes: people's labels are imported, a model's step scores come from scoring.
NOT_COMPUTED_KINDS = ("human", "model")
# A name is a column prefix of the labeled_steps view and part of an asset key: lower-case letters, digits, "_".
_NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")


@dataclass(frozen=True)
class Method:
    """One label method: what it is, the recipe key that runs it and the asset that writes its labels."""

    name: str  # the value in step_labels.method and the column prefix in labeled_steps
    kind: str  # one of KINDS
    display: str  # for tables and plots
    # The recipe's labels.methods key that runs it (methods one asset writes share it: sympy, z3 -> "formal");
    # None: the method's own name.
    recipe: str | None = None
    # The hand-written asset that writes its step_labels; None: ``<name>_labels``, the asset assets/labeling.py
    # makes from the labeler registry (no asset code to write).
    asset: str | None = None
    # Off unless asked for: its asset stays out of the refresh job and the recipe's vocabulary (a method that
    # needs something the default pipeline does not provide, e.g. a trained PRM, or a variant whose labels another
    # method already gives); run it from the UI or a flywheel (`make demo` runs both after its other runs).
    opt_in: bool = False

    def __post_init__(self) -> None:
        if not _NAME.fullmatch(self.name):
            raise ValueError(f"method name {self.name!r:.60} must be lower-case letters, digits and '_', starting "
                             "with a letter, at most 40 characters (it names labeled_steps columns and an asset)")
        if self.kind not in KINDS:
            raise ValueError(f"method {self.name!r} has kind {self.kind!r}; use one of {KINDS}")
        if not self.computed and (self.recipe is not None or self.asset is not None or self.opt_in):
            raise ValueError(f"method {self.name!r} is of kind {self.kind!r}, which no labeler computes; "
                             "it has no recipe key, asset or opt-in")

    @property
    def computed(self) -> bool:
        """Whether the pipeline computes it (a labeler is registered under its name)."""
        return self.kind not in NOT_COMPUTED_KINDS

    @property
    def recipe_key(self) -> str | None:
        """The recipe's ``labels.methods`` key that runs it; None when nothing computes it or it is opt-in."""
        return (self.recipe or self.name) if self.computed and not self.opt_in else None

    @property
    def asset_key(self) -> str | None:
        """The asset that writes its labels; None when nothing computes it."""
        return (self.asset or f"{self.name}_labels") if self.computed else None

    @property
    def generated(self) -> bool:
        """Whether its asset is made from the registry rather than written by hand."""
        return self.computed and self.asset is None


METHODS: tuple[Method, ...] = (
    Method("mc", "rollout", "Monte-Carlo rollouts (Math-Shepherd)", asset="mc_labels"),
    Method("mc_early_stop", "rollout", "Monte-Carlo, stop at first MC = 0", recipe="mc", asset="mc_labels"),
    # Its own asset, so a partition holds its labels beside fixed-N MC's (from the same rollout cache).
    Method("mc_adaptive", "rollout", "Monte-Carlo, adaptive: few rollouts per step, more where they split",
           opt_in=True),
    Method("omegaprm", "rollout", "OmegaPRM binary search", asset="omegaprm_labels"),
    Method("progress", "rollout", "Step progress MC(k) - MC(k-1) from the MC rollouts (PAV)",
           asset="progress_labels"),
    Method("sympy", "formal", "SymPy arithmetic check", recipe="formal", asset="formal_verifications"),
    Method("z3", "formal", "Z3 logic check", recipe="formal", asset="formal_verifications"),
    Method("sympy_ref", "formal", "SymPy + the reference solution's values", recipe="formal",
           asset="formal_verifications"),
    Method("judge", "judge", "LLM judge, majority of k votes", asset="judgments"),
    Method("consensus", "consensus", "Consensus of methods", asset="consensus_labels"),
    Method("human", "human", "Human annotation (imported)"),
    Method("active", "rollout", "Rollouts only where the PRM is unsure (ActPRM)", opt_in=True),
)

# The names code refers to. ``TRUTH`` is the pseudo-method no labeler writes: ``steps.is_correct_truth``, the
# exact step truth a generated task defines, read and compared like any method's labels.
TRUTH = "truth"
JUDGE = "judge"
CONSENSUS = "consensus"
# The methods whose labels read the problem's gold answer (rollouts are graded against it; consensus and progress
# build on MC): on ProcessBench-style audits they are reported apart from methods that see only problem and steps.
REFERENCE_METHODS: tuple[str, ...] = ("mc", "mc_early_stop", "mc_adaptive", "omegaprm", "progress", "sympy_ref",
                                      "consensus", "active")
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
    by_name = {m.name: m for m in METHODS}  # read on each call: the table is the one source (tests plant rows)
    if name not in by_name:
        raise ValueError(f"label method {name!r} is not in the method table {sorted(by_name)}; "
                         "add it to warehouse/methods/table.py (name, kind, display name) before writing its labels")
    return by_name[name]


def method_names(kind: str | None = None) -> tuple[str, ...]:
    """Names of every method, or of one kind.

    >>> method_names("formal")
    ('sympy', 'z3', 'sympy_ref')
    """
    if kind is not None and kind not in KINDS:
        raise ValueError(f"kind {kind!r} is unknown; use one of {KINDS}")
    return tuple(m.name for m in METHODS if kind is None or m.kind == kind)


def recipe_label_assets() -> dict[str, str]:
    """The recipe's ``labels.methods`` vocabulary: each key and the asset it materializes, in table order.

    >>> recipe_label_assets()
    {'mc': 'mc_labels', 'omegaprm': 'omegaprm_labels', 'progress': 'progress_labels', \
'formal': 'formal_verifications', 'judge': 'judgments', 'consensus': 'consensus_labels'}
    """
    out: dict[str, str] = {}
    for m in METHODS:
        if m.recipe_key is not None:
            out.setdefault(m.recipe_key, m.asset_key)
    return out


def opt_in_label_assets() -> tuple[str, ...]:
    """The assets of opt-in methods, which the refresh job leaves out.

    >>> opt_in_label_assets()
    ('mc_adaptive_labels', 'active_labels')
    """
    return tuple(dict.fromkeys(m.asset_key for m in METHODS if m.computed and m.opt_in))


def label_assets() -> dict[str, tuple[str, ...]]:
    """Every asset that writes step labels and the methods it writes, in table order.

    >>> label_assets()["formal_verifications"]
    ('sympy', 'z3', 'sympy_ref')
    """
    out: dict[str, tuple[str, ...]] = {}
    for m in METHODS:
        if m.computed:
            out[m.asset_key] = (*out.get(m.asset_key, ()), m.name)
    return out
