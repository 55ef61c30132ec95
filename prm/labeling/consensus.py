"""Consensus labels: combine the first-error verdicts of several methods under a named policy.

Inputs are warehouse rows: ``step_labels`` of the rollout methods (``mc``, ``omegaprm``) and of the judge,
``judgments``, and ``verifications`` (``sympy``/``z3``, one status per step). Each becomes one first-error
verdict per solution (:class:`SolutionVerdicts`); a policy keeps a solution with one first error or drops it:

* ``mc_judge_agree``: MC and the judge name the same first error (Qwen's "Lessons of Developing PRMs"
  consensus filter, Zhang et al. 2025).
* ``formal_override``: the formal verifiers' (``sympy``, ``z3``: the method table's ``formal`` kind) first
  error where they decide it and agree, else MC's.
* ``all_agree``: every method with a verdict agrees, and at least ``min_methods`` have one.

Each verifier is its own method (its ``verifications.verifier`` name). Its first error is decided when
every step before the first incorrect one is correct (or every step is correct: -1): later steps are
wrong by convention, so their coverage cannot change it. Kept solutions get ``step_labels`` rows with
method ``consensus``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from prm.format import first_error_of, labels_from_first_error, statuses_from_first_error
from prm.label_audit import AuditRow, audit_labels
from prm.labeling.types import LabelRun, PartitionRows, StepLabel, derived_run, params_json
from warehouse.methods import CONSENSUS, JUDGE, method_names


@dataclass(frozen=True)
class ConsensusConfig:
    """Which rows stand for which method, and how strict ``all_agree`` is.

    >>> ConsensusConfig(policy="majority")
    Traceback (most recent call last):
    ...
    ValueError: policy='majority' is unknown; use one of ['all_agree', 'formal_override', 'mc_judge_agree']
    """

    policy: str = "mc_judge_agree"  # a key of POLICIES
    mc_method: str = "mc"  # step_labels.method read as "MC" (e.g. "mc_early_stop", "omegaprm")
    judge_method: str = JUDGE  # judgments rows, or step_labels of this method
    min_methods: int = 2  # all_agree: agreement of fewer methods is no consensus

    def __post_init__(self) -> None:
        if self.policy not in POLICIES:
            raise ValueError(f"policy={self.policy!r} is unknown; use one of {sorted(POLICIES)}")
        if self.min_methods < 1:
            raise ValueError(f"min_methods={self.min_methods} must be >= 1; 2 makes all_agree a real cross-check")


@dataclass(frozen=True)
class SolutionVerdicts:
    """Every method's first error for one solution (-1 = no error; None = the method has no verdict)."""

    solution_id: str
    problem_id: str
    n_steps: int
    first_errors: Mapping[str, int | None]

    def get(self, method: str) -> int | None:
        return self.first_errors.get(method)


@dataclass(frozen=True)
class PolicyReport:
    """How much one policy keeps and, with exact truth, how good the kept labels are."""

    policy: str
    n_solutions: int
    n_kept: int
    kept_share: float | None
    audit: AuditRow | None  # audit_labels of the kept labels on kept solutions with truth; None without truth


@dataclass(frozen=True)
class ConsensusRun:
    """One policy applied: ``step_labels`` rows of kept solutions, and which were kept."""

    policy: str
    labels: tuple[StepLabel, ...]
    kept: tuple[str, ...]
    n_solutions: int

    def rows(self) -> list[dict[str, Any]]:
        return [lb.to_row() for lb in self.labels]


@dataclass(frozen=True)
class ConsensusResult:
    """What the consensus labeler produced: the policy applied, and every solution's verdicts it combined."""

    run: ConsensusRun
    verdicts: tuple[SolutionVerdicts, ...]


Policy = Callable[[SolutionVerdicts, ConsensusConfig], int | None]


def _mc_judge_agree(v: SolutionVerdicts, c: ConsensusConfig) -> int | None:
    mc, judge = v.get(c.mc_method), v.get(c.judge_method)
    return mc if mc is not None and mc == judge else None


def _formal_override(v: SolutionVerdicts, c: ConsensusConfig) -> int | None:
    formal = {fe for name in method_names("formal") if (fe := v.get(name)) is not None}
    return formal.pop() if len(formal) == 1 else v.get(c.mc_method)


def _all_agree(v: SolutionVerdicts, c: ConsensusConfig) -> int | None:
    found = {fe for fe in v.first_errors.values() if fe is not None}
    have = sum(fe is not None for fe in v.first_errors.values())
    return found.pop() if len(found) == 1 and have >= c.min_methods else None


POLICIES: dict[str, Policy] = {
    "mc_judge_agree": _mc_judge_agree,
    "formal_override": _formal_override,
    "all_agree": _all_agree,
}


def formal_first_error(statuses: Sequence[str | None]) -> int | None:
    """First error from per-step formal statuses, or None when an unknown step comes before it.

    >>> formal_first_error(["correct", "incorrect", None]), formal_first_error(["correct"] * 2)
    (1, -1)
    >>> formal_first_error(["correct", "unverifiable", "incorrect"]) is None
    True
    """
    return first_error_of([True if s == "correct" else False if s == "incorrect" else None for s in statuses])


def collect_verdicts(steps: Sequence[Mapping[str, Any]], step_labels: Sequence[Mapping[str, Any]] = (),
                     judgments: Sequence[Mapping[str, Any]] = (), verifications: Sequence[Mapping[str, Any]] = (),
                     judge_method: str = JUDGE) -> list[SolutionVerdicts]:
    """One :class:`SolutionVerdicts` per solution in ``steps`` (the ``steps`` table gives the step count).

    ``step_labels`` rows are grouped by ``method``; their ``first_error`` is used when set, else the first
    hard label False. ``judgments`` rows become method ``judge_method`` (over its step_labels, if both).
    """
    n_steps: dict[str, int] = defaultdict(int)
    problem: dict[str, str] = {}
    for s in steps:
        n_steps[s["solution_id"]] = max(n_steps[s["solution_id"]], int(s["step_idx"]) + 1)
        problem[s["solution_id"]] = s["problem_id"]
    fe: dict[str, dict[str, int | None]] = defaultdict(dict)
    hard: dict[tuple[str, str], dict[int, bool | None]] = defaultdict(dict)
    for r in step_labels:
        hard[(r["method"], r["solution_id"])][int(r["step_idx"])] = r.get("hard_label")
        if r.get("first_error") is not None:
            fe[r["solution_id"]][r["method"]] = int(r["first_error"])
    for (name, sid), labels in hard.items():
        if name not in fe[sid] and sid in n_steps:
            fe[sid][name] = first_error_of([labels.get(k) for k in range(n_steps[sid])])
    for j in judgments:
        fe[j["solution_id"]][judge_method] = None if j.get("first_error") is None else int(j["first_error"])
    formal: dict[tuple[str, str], dict[int, str]] = defaultdict(dict)
    for r in verifications:  # one verdict per step and verifier: the method is the verifier's name
        formal[(r["verifier"], r["solution_id"])][int(r["step_idx"])] = r["status"]
    for (verifier, sid), by_step in formal.items():
        fe[sid][verifier] = formal_first_error([by_step.get(k) for k in range(n_steps.get(sid, 0))])
    return [SolutionVerdicts(sid, problem[sid], n, dict(fe.get(sid, {}))) for sid, n in n_steps.items()]


def _labels(v: SolutionVerdicts, first_error: int, params: str) -> list[StepLabel]:
    """Hard labels from the consensus first error; soft = share of methods with a verdict that pass the step."""
    verdicts = [fe for fe in v.first_errors.values() if fe is not None]
    hard = labels_from_first_error(v.n_steps, first_error)
    status = statuses_from_first_error(v.n_steps, first_error)
    labels = []
    for k in range(v.n_steps):
        ok = sum(fe == -1 or fe > k for fe in verdicts)
        labels.append(StepLabel(solution_id=v.solution_id, problem_id=v.problem_id, step_idx=k,
                                method=CONSENSUS, soft_label=ok / len(verdicts) if verdicts else None,
                                hard_label=hard[k], status=status[k], n_rollouts=0, n_correct=0,
                                first_error=first_error, params_json=params))
    return labels


def apply_policy(verdicts: Sequence[SolutionVerdicts], config: ConsensusConfig | None = None) -> ConsensusRun:
    """Labels of the solutions ``config.policy`` keeps.

    >>> v = [SolutionVerdicts("a", "p", 2, {"mc": 1, "judge": 1}), SolutionVerdicts("b", "p", 2, {"mc": -1})]
    >>> run = apply_policy(v)
    >>> run.kept, [lb.hard_label for lb in run.labels]
    (('a',), [True, False])
    """
    config = config or ConsensusConfig()
    policy = POLICIES[config.policy]
    params = params_json(CONSENSUS, config)
    labels: list[StepLabel] = []
    kept: list[str] = []
    for v in verdicts:
        first_error = policy(v, config)
        if first_error is None or v.n_steps == 0 or first_error >= v.n_steps:
            continue
        kept.append(v.solution_id)
        labels += _labels(v, first_error, params)
    return ConsensusRun(config.policy, tuple(labels), tuple(kept), len(verdicts))


def consensus_report(verdicts: Sequence[SolutionVerdicts], steps: Sequence[Mapping[str, Any]] = (),
                     solutions: Sequence[Mapping[str, Any]] = (), policies: Sequence[str] = tuple(POLICIES),
                     config: ConsensusConfig | None = None) -> list[PolicyReport]:
    """Kept share per policy and, where ``solutions`` carry ``first_error_truth``, the audit of the kept
    labels on the kept solutions only (a filter is judged on what it keeps; kept share says at what price).
    """
    base = config or ConsensusConfig()
    reports = []
    for name in policies:
        cfg = ConsensusConfig(policy=name, mc_method=base.mc_method, judge_method=base.judge_method,
                              min_methods=base.min_methods)
        run = apply_policy(verdicts, cfg)
        kept = set(run.kept)
        truth = [s for s in solutions if s["solution_id"] in kept and s.get("first_error_truth") is not None]
        audit = audit_labels(f"{CONSENSUS}:{name}", run.labels, steps, truth) if truth else None
        share = len(kept) / run.n_solutions if run.n_solutions else None
        reports.append(PolicyReport(name, run.n_solutions, len(kept), share, audit))
    return reports


class ConsensusLabeler:
    """Consensus behind the one interface, derived variant: reads the partition's ``steps``, ``step_labels``
    (its own rows left out), ``judgments`` and ``verifications``; the label run's ``result`` is a
    :class:`ConsensusResult` (the :class:`ConsensusRun` and the verdicts)."""

    reads = ("steps", "step_labels", "judgments", "verifications")

    def __init__(self, config: ConsensusConfig | None = None, name: str = CONSENSUS) -> None:
        self.config = config or ConsensusConfig()
        self.name = name

    def label(self, rows: PartitionRows) -> LabelRun[ConsensusResult]:
        """Collect every method's first errors and apply ``config.policy``."""
        labels = [r for r in rows["step_labels"] if r["method"] != CONSENSUS]
        verdicts = collect_verdicts(rows["steps"], labels, rows["judgments"], rows["verifications"])
        run = apply_policy(verdicts, self.config)
        return derived_run(self.name, run.labels, result=ConsensusResult(run, tuple(verdicts)))
