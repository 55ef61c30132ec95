"""Label one (source, day) partition of the warehouse: rollout labelers (resumable), formal verifiers,
the LLM judge, and their consensus.

Every method resolves through :func:`prm.labeling.get_labeler`. Two shared paths, one per labeler variant:
:func:`label_partition` for the rollout methods (chunked, resumable) and :func:`derive_partition` for methods
derived from rows already stored (``label_progress_partition`` and ``consensus_partition`` are thin wrappers over
it). ``judge_partition`` calls the judge's labeler and also writes its ``judgments``; ``verify_partition`` writes
both formal verifiers' verdicts in one pass under the writer ``formal``, as the assets always have.
:func:`label_method_partition` picks the path of any registered method by its ``needs`` (the assets made from the
registry call it).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from prm.datagen import IMPORTED_MARK, solutions_to_label
from prm.format import STATUS_PSEUDO
from prm.generation import SOLUTION_MAX_TOKENS, GenerationBackend
from prm.label_audit import AuditRow, PeopleAudit, audit_against_people, audit_labels
from prm.labeling.consensus import (
    ConsensusConfig,
    ConsensusResult,
    ConsensusRun,
    PolicyReport,
    SolutionVerdicts,
    consensus_report,
)
from prm.labeling.constants import FORMAL_TIMEOUT_S
from prm.labeling.formal import FormalRun, verify_steps
from prm.labeling.judge import JudgeConfig, JudgeRun, resumed_rows, reusable_judgments, with_reused
from prm.labeling.progress import PROGRESS_METHOD, ProgressConfig
from prm.labeling.registry import LABELERS, get_labeler, labelers_needing
from prm.labeling.resume import label_in_chunks
from prm.labeling.sampler import backend_sampler
from prm.labeling.spending import RolloutBudget
from prm.labeling.types import DerivedLabeler, LabelRun, StepLabel
from warehouse import Warehouse
from warehouse.methods import CONSENSUS, JUDGE


@dataclass(frozen=True)
class PartitionLabelReport:
    """What labeling one partition did: counts, costs, and the audit against exact truth (if any)."""

    method: str
    labeled_solutions: int
    skipped_solutions: int
    labels: int
    new_rollouts: int
    cost_rollouts: int
    cost_tokens: int
    audit: AuditRow | None
    label_balance: dict[str, int] = field(default_factory=dict)
    budget_stopped: str | None = None  # why the rollout budget left solutions unlabeled; None = it did not
    plan_note: str | None = None  # what a planning labeler's estimate rested on (active: its calibration)


def label_partition(
    wh: Warehouse,
    method: str,
    config: Any,
    backend: Callable[[], GenerationBackend],
    *,
    model: str,
    source: str,
    day: str,
    run_id: str,
    prompt: Callable[[str], str],
    resume: bool = True,
    seed: int = 0,
    max_tokens: int = SOLUTION_MAX_TOKENS,
    temperature: float = 1.0,
    chunk_solutions: int = 64,
    progress: Callable[[str], None] = print,
) -> PartitionLabelReport:
    """Label the partition's solutions with ``method`` and write labels and new rollouts chunk by chunk.

    ``backend`` is called (to start the engine) only when a rollout the labels need is not in the warehouse yet;
    fresh rollouts are sampled at ``temperature`` (the policy's own distribution at 1.0; an instruct model such as
    SmolLM2 wants ~0.7). Rollouts already in the warehouse for this policy are reused (never paid twice), so a
    labeler the stored rollouts serve (adaptive MC after fixed-N MC) starts no engine. With ``resume``,
    solutions already labeled by ``method`` are skipped, so a killed run continues where it stopped;
    without it, the method's earlier labels of the partition are removed first. They are removed too when
    any of them is stale (see :func:`current_labels`): resuming over re-sampled solutions would keep labels
    of texts that no longer exist.
    """
    if method in LABELERS and LABELERS[method].needs != "rollouts":
        raise ValueError(f"label method {method!r} does not sample rollouts; label_partition runs "
                         f"{labelers_needing('rollouts')}, derive_partition the methods read from stored rows")
    solutions = solutions_to_label(wh, source, day, prompt)
    done = current_labels(wh, method, source, day)
    if not resume or done is None:  # asked to start over, or the labels describe solutions since re-sampled
        wh.delete_partition("step_labels", source, day, writer=method)
        if done is None:  # and the rollouts this method drew for solutions that no longer exist
            wh.delete_partition("rollouts", source, day, writer=method)
        done = set()
    if not [s for s in solutions if s.solution_id not in done]:
        return PartitionLabelReport(method=method, labeled_solutions=0, skipped_solutions=len(done), labels=0,
                                    new_rollouts=0, cost_rollouts=0, cost_tokens=0,
                                    audit=audit_partition(wh, method, source, day))
    labeler = get_labeler(method, config)
    plan = getattr(labeler, "plan", None)  # a labeler that chooses what to pay for across the partition (active)
    plan_note = None
    if callable(plan):  # before the engine starts: it may load a model of its own
        questions = {p["problem_id"]: p["question"] for p in wh.read_partition("problems", source, day).to_pylist()}
        calibrate_on = getattr(getattr(labeler, "config", None), "calibration_methods", None)
        labeled = partition_step_labels(wh, calibrate_on(method), source, day) if callable(calibrate_on) else None
        plan_note = getattr(plan(solutions, questions=questions, done=done, labeled=labeled), "calibration", "") or None
    existing = [r for r in wh.read_partition("rollouts", source, day).to_pylist() if r["model"] == model]
    sampler = backend_sampler(_OnFirstUse(backend), existing, model=model, seed=seed, max_tokens=max_tokens,
                              temperature=temperature)
    budget = getattr(labeler, "budget", None)
    if isinstance(budget, RolloutBudget) and budget.limit is not None and done:  # a resumed partition spent some
        stored = wh.read_partition("step_labels", source, day).to_pylist()
        budget.charge(sum(int(r["cost_rollouts"] or 0) for r in stored if r["method"] == method))
    totals = defaultdict(int)
    for i, run in enumerate(label_in_chunks(labeler, solutions, sampler, skip=done, max_solutions=chunk_solutions)):
        new_rollouts = list(run.new_rollouts)  # the labeler drained the sampler's buffer into its run
        kw = {"source": source, "day": day, "run_id": run_id, "writer": method}
        if new_rollouts:
            wh.write("rollouts", new_rollouts, **kw)
        wh.write("step_labels", run.rows(), **kw)  # after its rollouts: a resumed run finds them cached
        totals["solutions"] += len(run.solution_ids)
        totals["labels"] += len(run.labels)
        totals["new_rollouts"] += len(new_rollouts)
        totals["cost_rollouts"] += run.cost_rollouts
        totals["cost_tokens"] += run.cost_tokens
        progress(f"{method}: chunk {i + 1} labeled {totals['solutions']}/{len(solutions) - len(done)} solutions")
    return PartitionLabelReport(
        method=method, labeled_solutions=totals["solutions"], skipped_solutions=len(done), labels=totals["labels"],
        new_rollouts=totals["new_rollouts"], cost_rollouts=totals["cost_rollouts"],
        cost_tokens=totals["cost_tokens"], audit=audit_partition(wh, method, source, day),
        label_balance=label_balance(wh, method, source, day), budget_stopped=_budget_note(budget, totals["solutions"],
                                                                                         len(solutions) - len(done)),
        plan_note=plan_note)


class _OnFirstUse:
    """A generation backend started by ``start`` when first used (the rollout cache asks it only for what it lacks)."""

    def __init__(self, start: Callable[[], GenerationBackend]) -> None:
        self._start = start
        self._backend: GenerationBackend | None = None

    def __getattr__(self, name: str) -> Any:
        if self._backend is None:
            self._backend = self._start()
        return getattr(self._backend, name)


def _budget_note(budget: object, labeled: int, wanted: int) -> str | None:
    """One line saying the rollout budget stopped labeling, or None when it did not."""
    if not isinstance(budget, RolloutBudget) or not budget.stopped:
        return None
    return (f"rollout budget max_rollouts_per_partition={budget.limit} spent ({budget.spent} charged): "
            f"{labeled} of {wanted} solutions to label were labeled (OmegaPRM: searches stopped where they were); "
            "raise the budget and rerun to label the rest")


def partition_step_labels(wh: Warehouse, methods: Sequence[str], source: str, day: str) -> dict[str, list[bool]]:
    """Per solution of the partition, its per-step hard labels (True = good) by the first of ``methods`` that
    labeled every step of it; pseudo-labels and unknown steps are left out."""
    by: dict[tuple[str, str], dict[int, bool]] = defaultdict(dict)
    for r in wh.read_partition("step_labels", source, day).to_pylist():
        if r["method"] in methods and r["status"] != STATUS_PSEUDO and r["hard_label"] is not None:
            by[(r["method"], r["solution_id"])][int(r["step_idx"])] = bool(r["hard_label"])
    out: dict[str, list[bool]] = {}
    for m in methods:
        for (method, sid), steps in by.items():
            if method == m and sid not in out and sorted(steps) == list(range(len(steps))):
                out[sid] = [steps[k] for k in range(len(steps))]
    return out


def label_balance(wh: Warehouse, method: str, source: str, day: str) -> dict[str, int]:
    """``method``'s stored step labels of the partition by hard label: good, bad, none."""
    balance: dict[str, int] = defaultdict(int)
    for r in wh.read_partition("step_labels", source, day).to_pylist():
        if r["method"] == method:
            balance["good" if r["hard_label"] else "bad" if r["hard_label"] is not None else "none"] += 1
    return dict(balance)


def current_labels(wh: Warehouse, method: str, source: str, day: str) -> set[str] | None:
    """Ids of solutions ``method`` already labeled in the partition; None when a label is stale: its
    solution is gone or was re-written after it (the ``solutions`` asset replaces a partition, and a
    sample id can then carry a new text)."""
    written = {s["solution_id"]: s["created_at"] for s in wh.read_partition("solutions", source, day).to_pylist()}
    done: set[str] = set()
    for r in wh.read_partition("step_labels", source, day).to_pylist():
        if r["method"] != method:
            continue
        if r["solution_id"] not in written or r["created_at"] < written[r["solution_id"]]:
            return None
        done.add(r["solution_id"])
    return done


def audit_partition(wh: Warehouse, method: str, source: str, day: str) -> AuditRow | None:
    """Audit ``method``'s labels of the partition against exact truth; None when the task has none."""
    solutions = [s for s in wh.read_partition("solutions", source, day).to_pylist()
                 if s["status"] == "ok" and s.get("first_error_truth") is not None]
    if not solutions:
        return None
    labels = [r for r in wh.read_partition("step_labels", source, day).to_pylist() if r["method"] == method]
    steps = wh.read_partition("steps", source, day).to_pylist()
    return audit_labels(method, labels, steps, solutions)


def people_audit_partition(wh: Warehouse, methods: Sequence[str], source: str, day: str,
                           uses_reference: Collection[str] = ()) -> list[PeopleAudit]:
    """Each of ``methods`` (those with labels here) against the human first errors of the partition's imported
    solutions (:mod:`prm.datagen.intake`); [] when its problems came from no solution file, whose first errors are
    a generator's exact truth, not people's. ``uses_reference``: the methods that read gold answers."""
    problems = wh.read_partition("problems", source, day).to_pylist()
    imported = {p["problem_id"] for p in problems if IMPORTED_MARK in (p.get("meta_json") or "")}
    solutions = [s for s in wh.read_partition("solutions", source, day).to_pylist()
                 if s["problem_id"] in imported and s["status"] == "ok" and s.get("first_error_truth") is not None]
    if not solutions:
        return []
    labels = wh.read_partition("step_labels", source, day).to_pylist()
    steps = wh.read_partition("steps", source, day).to_pylist()
    return [audit_against_people(m, [r for r in labels if r["method"] == m], steps, solutions, split=source,
                                 uses_reference=m in uses_reference)
            for m in methods if any(r["method"] == m for r in labels)]


def derive_partition(wh: Warehouse, method: str, config: Any = None, *, source: str, day: str, run_id: str,
                     writer: str | None = None) -> LabelRun:
    """The one warehouse path of a derived method (:class:`prm.labeling.DerivedLabeler`): read the tables its
    labeler ``reads``, label, and replace the partition's ``step_labels`` of ``writer`` (default: the method)."""
    labeler = get_labeler(method, config)
    if not isinstance(labeler, DerivedLabeler):
        raise TypeError(f"label method {method!r} labels solutions, not warehouse rows; use label_partition")
    run = labeler.label({table: wh.read_partition(table, source, day).to_pylist() for table in labeler.reads})
    wh.write("step_labels", run.rows(), source=source, day=day, run_id=run_id, writer=writer or method, replace=True)
    return run


def label_method_partition(wh: Warehouse, method: str, config: Any = None, *, source: str, day: str, run_id: str,
                           backend: Callable[[], GenerationBackend] | None = None, model: str | None = None,
                           prompt: Callable[[str], str] | None = None,
                           progress: Callable[[str], None] = print) -> PartitionLabelReport:
    """Label the partition with any registered method through the path its registry entry's ``needs`` names: a
    rollout method through :func:`label_partition`, a derived one through :func:`derive_partition`, a backend one
    (an LLM reading whole solutions) by one ``label`` call. The assets made from the registry call this.

    ``backend`` (a call that starts the engine) and ``prompt`` are needed by rollout and backend methods, ``model``
    (the policy's version, which keys the rollout cache) by rollout methods. The method's labels of the partition
    are replaced, except that a rollout method resumes (:func:`label_partition`).
    """
    if method not in LABELERS:
        get_labeler(method)  # the ValueError naming the registered methods
    needs = LABELERS[method].needs
    missing = [name for name, value in (("backend", backend), ("prompt", prompt), ("model", model))
               if value is None and needs != "rows" and (name != "model" or needs == "rollouts")]
    if missing:
        raise ValueError(f"label method {method!r} needs {needs}: pass {' and '.join(missing)}")
    if needs == "rollouts":
        return label_partition(wh, method, config, backend, model=model, source=source, day=day, run_id=run_id,
                               prompt=prompt, progress=progress)
    if needs == "rows":
        run = derive_partition(wh, method, config, source=source, day=day, run_id=run_id)
    else:
        solutions = solutions_to_label(wh, source, day, prompt)
        run = get_labeler(method, config).label(solutions, backend()) if solutions else None
        wh.write("step_labels", [] if run is None else run.rows(), source=source, day=day, run_id=run_id,
                 writer=method, replace=True)
    return PartitionLabelReport(
        method=method, labeled_solutions=0 if run is None else len(run.solution_ids), skipped_solutions=0,
        labels=0 if run is None else len(run.labels), new_rollouts=0,
        cost_rollouts=0 if run is None else run.cost_rollouts, cost_tokens=0 if run is None else run.cost_tokens,
        audit=audit_partition(wh, method, source, day), label_balance=label_balance(wh, method, source, day))


def label_progress_partition(wh: Warehouse, config: ProgressConfig, *, source: str, day: str,
                             run_id: str) -> list[StepLabel]:
    """Progress labels of the partition from its ``config.base_method`` labels; replaces earlier ones."""
    return list(derive_partition(wh, PROGRESS_METHOD, config, source=source, day=day, run_id=run_id).labels)


def verify_partition(wh: Warehouse, *, source: str, day: str, run_id: str,
                     timeout_s: float = FORMAL_TIMEOUT_S) -> FormalRun:
    """Formal verdicts for every step of the partition: ``verifications`` rows and step labels.

    Every verifier's verdicts are written together under the writer ``formal`` (one pool batch per verifier),
    so this stays one :func:`verify_steps` call rather than one :func:`derive_partition` per verifier.
    """
    task_of = {p["problem_id"]: p["task"] for p in wh.read_partition("problems", source, day).to_pylist()}
    run = verify_steps(wh.read_partition("steps", source, day).to_pylist(), task_of, timeout_s)
    kw = {"source": source, "day": day, "run_id": run_id, "replace": True}
    wh.write("verifications", run.verifications, writer="formal", **kw)
    wh.write("step_labels", run.labels, writer="formal", **kw)
    return run


def judge_partition(wh: Warehouse, backend: Callable[[], GenerationBackend], config: JudgeConfig, *, source: str,
                    day: str, run_id: str, policy_prompt: Callable[[str], str],
                    max_solutions: int | None = None) -> JudgeRun:
    """LLM-judge votes for the partition's solutions (the first ``max_solutions`` by id, a hash-random
    sample): ``judgments`` rows and ``judge`` step labels. It resumes: a solution already judged with ``config``
    since its text was written keeps its rows (:func:`prm.labeling.judge.reusable_judgments`), and ``backend`` is
    called (the engine started) only when a solution is left to judge."""
    questions = {p["problem_id"]: p["question"] for p in wh.read_partition("problems", source, day).to_pylist()}
    solutions = sorted(solutions_to_label(wh, source, day, policy_prompt), key=lambda s: s.solution_id)
    if not solutions:
        return JudgeRun(judgments=(), labels=(), cost_tokens=0, n_abstain=0, errors=())
    chosen = solutions[:max_solutions]
    written = {s["solution_id"]: s["created_at"] for s in wh.read_partition("solutions", source, day).to_pylist()}
    stored = wh.read_partition("judgments", source, day).to_pylist()  # the judge is its one writer
    labels = [r for r in wh.read_partition("step_labels", source, day).to_pylist() if r["method"] == JUDGE]
    kept = reusable_judgments(stored, labels, {s.solution_id: written[s.solution_id] for s in chosen}, config)
    kept_labels = [r for r in labels if r["solution_id"] in kept]
    todo = [s for s in chosen if s.solution_id not in kept and s.steps]  # judge_solutions skips step-less ones
    new = (get_labeler(JUDGE, config).label(todo, backend(), questions=questions).result_as(JudgeRun) if todo
           else JudgeRun(judgments=(), labels=(), cost_tokens=0, n_abstain=0))
    if new.judgments or len(kept) < len(stored) or len(kept_labels) < len(labels):  # else the stored rows stand
        judgments, step_labels = resumed_rows(new, kept, kept_labels, run_id)
        kw = {"source": source, "day": day, "run_id": run_id, "replace": True}
        wh.write("judgments", judgments, writer=JUDGE, **kw)
        wh.write("step_labels", step_labels, writer=JUDGE, **kw)
    return with_reused(new, kept, kept_labels, [s.solution_id for s in chosen])


def consensus_partition(wh: Warehouse, config: ConsensusConfig, *, source: str, day: str,
                        run_id: str) -> tuple[ConsensusRun, list[PolicyReport], list[SolutionVerdicts]]:
    """Combine every method's first errors with ``config.policy``; report all policies side by side."""
    result = derive_partition(wh, CONSENSUS, config, source=source, day=day, run_id=run_id).result_as(ConsensusResult)
    run, verdicts = result.run, list(result.verdicts)
    steps = wh.read_partition("steps", source, day).to_pylist()
    solutions = wh.read_partition("solutions", source, day).to_pylist()
    return run, consensus_report(verdicts, steps, solutions, config=config), verdicts
