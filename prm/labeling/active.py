"""Active labels (ActPRM, Duan et al. 2025): spend rollouts only where the PRM is unsure.

A PRM scores every solution; :mod:`prm.labeling.uncertainty` says which ones it is sure of (ActPRM's rule: every
step up to its first predicted error confident, and the passes agreeing). The unsure ones go, most unsure first and
at most ``max_share`` / ``max_solutions`` of the partition, to a backing rollout labeler (OmegaPRM by default, MC
by config), whose labels are written under this method's name. The trusted ones are skipped; with
``pseudo_labels`` they get the PRM's own labels instead, each row with ``status = "pseudo"`` (a training set drops
them with ``TrainingSetConfig(exclude_pseudo=True)``).

Rows: a selected solution's are its backing labeler's, ``params_json`` holding this config and the backing's
(``backing_params``); a pseudo-labeled solution's hard labels follow the PRM's first predicted error (good before,
wrong at and after it), soft labels are the PRM's P(good) up to it and 0 after, no rollouts; a solution skipped
(trusted without pseudo labels, or unsure beyond the budget) has no row, so a later run looks at it again.

``prm`` is ``trained`` (the ``prm_model`` asset's newest version), a PRM folder, a PRM root (``models/prm``: its
newest version) or a registered name (:func:`prm.models.local_model`); None means no PRM yet (a flywheel's first
round), and every solution is unsure. The selection is deterministic: by unsureness, ties by a hash of ``(seed,
solution_id)``.

``label_partition`` calls :meth:`ActiveLabeler.plan` once with the whole partition (so the budget is the
partition's, and the PRM is loaded and released before the rollout engine starts), then ``label`` per chunk.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from prm.datagen import SolutionToLabel
from prm.format import STATUS_PSEUDO, labels_from_first_error
from prm.labeling.constants import DEFAULT_N_ROLLOUTS
from prm.labeling.mc import MCConfig, MCLabeler
from prm.labeling.omega_search import OmegaPRMConfig
from prm.labeling.omegaprm import OmegaPRMLabeler
from prm.labeling.types import Labeler, LabelRun, RolloutSampler, StepLabel, params_json
from prm.labeling.uncertainty import UNCERTAINTIES, StepBelief, estimate, is_trusted
from prm.scoring import Scorer
from prm.settings import check_count, check_range, check_rollouts, check_seed

BACKINGS = ("omegaprm", "mc")
# ActPRM's thresholds (sail-sg/ActivePRM): confident at P >= 0.9 or <= 0.1, heads agreeing within std 0.01.
ACTPRM_LOW, ACTPRM_HIGH, ACTPRM_MAX_STD = 0.1, 0.9, 0.01
DEFAULT_PRM = "trained"  # the prm_model asset's newest version (prm.models.local_model), wherever the cache is
MAX_PASSES = 256  # dropout passes: each is a full scoring pass of every solution


@dataclass(frozen=True)
class ActiveConfig:
    """Active-label settings; the thresholds are ActPRM's (choose others on validation data, never on a test split).

    >>> ActiveConfig(low=0.6, high=0.4)
    Traceback (most recent call last):
    ...
    ValueError: low=0.6 must be below high=0.4: a step is confident at P <= low or P >= high
    """

    prm: str | None = DEFAULT_PRM  # the scoring PRM (folder, PRM root, registered name); None: every one is unsure
    # One of UNCERTAINTIES (prm/labeling/uncertainty.py says why calibrated is the default). calibrated fits on the
    # labeled steps of the partition's solutions by the methods in calibrate_on (None: this method's own earlier
    # labels and the backing method's), pseudo-labels excluded.
    uncertainty: str = "calibrated"
    calibrate_on: tuple[str, ...] | None = None
    low: float = ACTPRM_LOW  # a step is confident at P(good) <= low ...
    high: float = ACTPRM_HIGH  # ... or >= high
    max_std: float = ACTPRM_MAX_STD  # dropout: the most the passes may disagree on a confident step
    passes: int = 8  # dropout: stochastic forward passes
    dropout_p: float | None = None  # dropout: the layers' p during the passes; None = the model's own
    backing: str = "omegaprm"  # the labeler of unsure solutions: one of BACKINGS
    rollouts: int = DEFAULT_N_ROLLOUTS  # OmegaPRM's k or MC's N
    max_share: float = 1.0  # at most this share of the partition's solutions go to the backing labeler
    max_solutions: int | None = None  # and at most this many; None = no count limit
    pseudo_labels: bool = False  # write the PRM's labels for trusted solutions, status "pseudo"
    batch_size: int | None = None  # scoring batch; None = the scorer's own
    device: str | None = None  # where the PRM scores ("cpu" beside a busy GPU); None: CUDA when available
    seed: int = 0  # dropout passes and the order of equally unsure solutions

    def __post_init__(self) -> None:
        if self.calibrate_on is not None:
            object.__setattr__(self, "calibrate_on", tuple(self.calibrate_on))
            if not all(isinstance(m, str) and m.strip() for m in self.calibrate_on):
                raise ValueError(f"calibrate_on={self.calibrate_on!r} must name label methods")
        if self.uncertainty not in UNCERTAINTIES:
            raise ValueError(f"uncertainty={self.uncertainty!r} is unknown; use one of {UNCERTAINTIES}")
        if self.backing not in BACKINGS:
            raise ValueError(f"backing={self.backing!r} is unknown; use one of {BACKINGS}")
        if self.prm is not None and not (isinstance(self.prm, str) and self.prm.strip()):
            raise ValueError("prm must name a PRM folder, root or registered name, or be None for no PRM")
        for name in ("low", "high"):
            check_range(name, getattr(self, name), low=0.0, high=1.0, why="a probability")
        if self.low >= self.high:
            raise ValueError(f"low={self.low:g} must be below high={self.high:g}: a step is confident at P <= low "
                             "or P >= high")
        check_range("max_std", self.max_std, low=0.0, why="a standard deviation of probabilities")
        check_count("passes", self.passes, high=MAX_PASSES, why="each is a scoring pass of every solution")
        if self.dropout_p is not None:
            check_range("dropout_p", self.dropout_p, low=0.0, high=1.0, low_open=True, high_open=True,
                        why="a dropout probability")
        check_rollouts("rollouts", self.rollouts)
        check_range("max_share", self.max_share, low=0.0, high=1.0, why="a share of the partition's solutions")
        if self.max_solutions is not None:
            check_count("max_solutions", self.max_solutions, low=0, high=10**9, why="solutions per partition")
        if self.batch_size is not None:
            check_count("batch_size", self.batch_size, high=4096, why="solutions per scoring batch")
        check_seed("seed", self.seed)

    def calibration_methods(self, name: str) -> tuple[str, ...]:
        """The label methods whose labels ``calibrated`` fits on, for a labeler writing under ``name``.

        >>> ActiveConfig().calibration_methods("active"), ActiveConfig(calibrate_on=("mc",)).calibration_methods("a")
        (('active', 'omegaprm'), ('mc',))
        """
        return self.calibrate_on if self.calibrate_on is not None else (name, self.backing)

    def backing_labeler(self, name: str) -> Labeler:
        """The backing labeler, writing under ``name``; OmegaPRM unscreened (a selected solution is to be labeled)."""
        if self.backing == "omegaprm":
            return OmegaPRMLabeler(OmegaPRMConfig(k=self.rollouts, screen=False), name)
        return MCLabeler(MCConfig(n_rollouts=self.rollouts), name)


@dataclass(frozen=True)
class ActivePlan:
    """Which solutions go where: ``selected`` to the backing labeler (most unsure first), ``trusted`` skipped or
    pseudo-labeled, ``over_budget`` unsure but beyond the budget; the PRM's belief of each scored solution."""

    selected: tuple[str, ...]
    trusted: tuple[str, ...]
    over_budget: tuple[str, ...]
    beliefs: Mapping[str, StepBelief] = field(default_factory=dict)
    calibration: str = ""  # what ``calibrated`` fit on, or why it could not; empty for the other estimates

    def first_error_hints(self) -> dict[str, int]:
        """The PRM's first predicted error (-1 = none) of each selected solution it scored: where a backing search
        could start (see :meth:`ActiveLabeler.label`)."""
        return {sid: self.beliefs[sid].first_error for sid in self.selected if sid in self.beliefs}


def order_key(seed: int, solution_id: str) -> str:
    """The seed-stable tie order of equally unsure solutions.

    >>> order_key(0, "s1") == order_key(0, "s1") != order_key(1, "s1")
    True
    """
    return hashlib.sha256(f"{seed}\x1f{solution_id}".encode()).hexdigest()


class ActiveLabeler:
    """Active labeler; ``name`` becomes ``step_labels.method``. ``scorer`` (any :class:`prm.scoring.Scorer`) stands
    in for loading ``config.prm``: a test's scripted PRM, or one the caller already holds."""

    def __init__(self, config: ActiveConfig | None = None, name: str = "active", *,
                 scorer: Scorer | None = None) -> None:
        self.config = config or ActiveConfig()
        self.name = name
        self.scorer = scorer
        self.backing = self.config.backing_labeler(name)  # one for every chunk: its state (a budget) carries over
        self._plan: ActivePlan | None = None
        self._fit: tuple[list[tuple[str, list[str]]], list[list[bool]]] = ([], [])  # calibrated's labeled steps
        self._calibration = ""  # what the last plan's estimate fit on

    @property
    def budget(self) -> Any:
        """The backing labeler's rollout budget, if it keeps one (``label_partition`` charges a resumed run to it)."""
        return getattr(self.backing, "budget", None)

    def plan(self, solutions: Sequence[SolutionToLabel], *, questions: Mapping[str, str] | None = None,
             done: Collection[str] = (), labeled: Mapping[str, Sequence[bool]] | None = None) -> ActivePlan:
        """Score ``solutions`` (minus ``done``, already labeled by an earlier run, which count against the budget)
        and decide which go to the backing labeler; kept for the ``label`` calls that follow.

        ``questions`` maps problem_id to the problem text the PRM reads; without it the policy prompt is read.
        ``labeled`` maps solution_id to per-step labels (True = good) of solutions among ``solutions``: what
        ``uncertainty="calibrated"`` fits on (:meth:`ActiveConfig.calibration_methods` says whose).
        """
        todo = [s for s in solutions if s.solution_id not in done and s.steps]
        questions = questions or {}
        known = [(s, list(labeled[s.solution_id])) for s in solutions
                 if labeled and s.solution_id in labeled and len(labeled[s.solution_id]) == len(s.steps) and s.steps]
        self._fit = ([(questions.get(s.problem_id, s.prompt), list(s.steps)) for s, _ in known],
                     [y for _, y in known])
        self._calibration = ""
        scored = self._beliefs(todo, questions)  # [] without a PRM
        beliefs = dict(zip((s.solution_id for s in todo), scored, strict=True)) if scored else {}
        cfg = self.config
        trusted = [sid for sid, b in beliefs.items()
                   if is_trusted(b, low=cfg.low, high=cfg.high, max_std=cfg.max_std)]
        sure = set(trusted)
        unsure = sorted((s.solution_id for s in todo if s.solution_id not in sure),
                        key=lambda sid: (-beliefs[sid].unsure() if sid in beliefs else -math.inf,
                                         order_key(cfg.seed, sid)))
        already = len(set(done) & {s.solution_id for s in solutions})
        budget = math.floor(cfg.max_share * (len(todo) + already) + 1e-9) - already
        if cfg.max_solutions is not None:
            budget = min(budget, cfg.max_solutions - already)
        budget = max(budget, 0)
        self._plan = ActivePlan(tuple(unsure[:budget]), tuple(trusted), tuple(unsure[budget:]), beliefs,
                                self._calibration)
        return self._plan

    def _beliefs(self, todo: Sequence[SolutionToLabel], questions: Mapping[str, str]) -> list[StepBelief]:
        """The PRM's belief of each solution; with no PRM, none (every solution is unsure)."""
        if not todo or (self.scorer is None and self.config.prm is None):
            return []
        scorer, loaded = self.scorer, False
        if scorer is None:
            from prm.scoring import ScorerConfig, load_prm

            scorer, loaded = load_prm(self.config.prm, ScorerConfig(batch_size=self.config.batch_size,
                                                             device=self.config.device)), True
        try:
            cfg = self.config
            labeled, labels = self._fit
            how = estimate(cfg.uncertainty, passes=cfg.passes, seed=cfg.seed, dropout_p=cfg.dropout_p,
                           labeled=labeled, labels=labels)
            beliefs = how.beliefs(scorer, [(questions.get(s.problem_id, s.prompt), list(s.steps)) for s in todo])
            self._calibration = getattr(how, "fitted", "")
            return beliefs
        finally:
            if loaded:  # released before the rollout engine needs the memory
                scorer.close()

    def label(self, solutions: Sequence[SolutionToLabel], sampler: RolloutSampler, *,
              skip: Collection[str] = (), questions: Mapping[str, str] | None = None) -> LabelRun:
        """Label ``solutions`` (minus ``skip``): the plan's selected ones by the backing labeler, trusted ones by
        the PRM when ``pseudo_labels``. Uses the plan of :meth:`plan` when it covers them, else plans them now.

        A backing labeler whose ``label`` takes ``start_hints`` (OmegaPRM) starts each binary search where the PRM
        puts the solution's first error (:meth:`ActivePlan.first_error_hints`; -1, no predicted error, is ignored).
        """
        todo = [s for s in solutions if s.solution_id not in skip and s.steps]
        plan = self._plan
        decided = set() if plan is None else {*plan.selected, *plan.trusted, *plan.over_budget}
        if plan is None or not {s.solution_id for s in todo} <= decided:
            plan = self.plan(todo, questions=questions)
        chosen = set(plan.selected)
        backing = self.backing
        chosen_todo = [s for s in todo if s.solution_id in chosen]
        if isinstance(backing, OmegaPRMLabeler):  # its binary search starts at the PRM's first error
            run = backing.label(chosen_todo, sampler, start_hints=plan.first_error_hints())
        else:
            run = backing.label(chosen_todo, sampler)
        params = self._params(backing)
        labels = [replace(lb, params_json=params) for lb in run.labels]
        trusted = set(plan.trusted)
        pseudo = [s for s in todo if s.solution_id in trusted] if self.config.pseudo_labels else []
        labels += [lb for s in pseudo for lb in self._pseudo(s, plan.beliefs[s.solution_id], params)]
        in_todo = {s.solution_id for s in todo}
        extra = {**run.extra, "selected": len(chosen & in_todo), "trusted": len(trusted & in_todo),
                 "over_budget": len(set(plan.over_budget) & in_todo), "pseudo_labeled": len(pseudo),
                 **({"calibration": plan.calibration} if plan.calibration else {})}
        return replace(run, method=self.name, labels=tuple(labels),
                       solution_ids=(*run.solution_ids, *(s.solution_id for s in pseudo)), extra=extra)

    def _params(self, backing: Labeler) -> str:
        own = json.loads(params_json(self.name, self.config))
        return json.dumps({**own, "backing_params": json.loads(params_json(self.name, backing.config))},
                          sort_keys=True)

    def _pseudo(self, sol: SolutionToLabel, belief: StepBelief, params: str) -> list[StepLabel]:
        """The PRM's labels of a trusted solution: good before its first predicted error, wrong from it on."""
        first = belief.first_error
        hard = labels_from_first_error(len(sol.steps), first)
        return [StepLabel(solution_id=sol.solution_id, problem_id=sol.problem_id, step_idx=k, method=self.name,
                          soft_label=belief.probs[k] if first < 0 or k <= first else 0.0, hard_label=hard[k],
                          status=STATUS_PSEUDO, n_rollouts=0, n_correct=0, first_error=first, params_json=params)
                for k in range(len(sol.steps))]
