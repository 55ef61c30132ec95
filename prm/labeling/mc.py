"""Math-Shepherd Monte-Carlo step labels: N rollouts per step prefix, soft = share reaching gold.

Every round makes ONE sampler call holding every pending prefix of every solution in the call, so the
engine batches across questions. Options:

* ``early_stop``: steps are estimated in order and a solution stops at its first step with MC = 0;
  later steps get ``hard_label=False`` with ``status='by_convention'`` (a prefix that cannot reach the
  answer stays unable to, the convention of ``prm.tasks.arithmetic.step_truth``).
* ``monotone`` (default): a hard label follows the *latest* prefix that reached gold, so step ``k`` is
  good when any prefix ``>= k`` reached it (a prefix that can still reach the answer holds no error yet,
  OmegaPRM's binary-search premise). A few failed rollouts of a weak policy then no longer mark a good
  early step bad. ``monotone=False`` is Math-Shepherd's per-prefix rule, ``hard = soft > 0``, which the
  stored ``soft_label``/``n_correct`` also give back in SQL. Early stop sees no later prefix, so it is
  per-prefix either way.
* ``adaptive_round=k``: sample a step in rounds of ``k`` rollouts and stop as soon as one reaches gold.
  The hard label (MC > 0) is then decided with certainty, so it never differs from the fixed-N label;
  only steps still at MC = 0 go on to the full ``n_rollouts``. The price is a coarser soft label on
  easy steps (k rollouts instead of N), which is why it is off by default.
* ``adaptive``: ``adaptive_min`` rollouts first; a step whose rollouts agree (all reach gold or none does) stops
  there, a split one is topped up to ``adaptive_max`` (:mod:`prm.labeling.spending`). ``n_rollouts`` is then not
  used. A step settled at MC = 0 after ``adaptive_min`` is labeled bad where fixed N might have found a success:
  the rule (MC > 0) is unchanged, the evidence behind it is ``adaptive_min`` rollouts. Off by default.
* ``max_rollouts_per_partition``: a budget over every ``label`` call of one labeler (one partition in
  :func:`prm.labeling.label_partition`). Solutions are admitted in order while their worst case (steps x the most
  rollouts a step can take) fits what is left; unused reservations come back, and the first solution that does
  not fit stops labeling: it and every later one get no rows (a later run with more budget labels them).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from prm.datagen import SolutionToLabel
from prm.format import first_error_of
from prm.labeling.constants import (
    DEFAULT_N_ROLLOUTS,
    STATUS_BY_CONVENTION,
    STATUS_LABELED,
    STATUS_UNVERIFIABLE,
)
from prm.labeling.spending import (
    ADAPTIVE_MAX,
    ADAPTIVE_MIN,
    RolloutBudget,
    check_adaptive,
    check_budget,
    settled,
)
from prm.labeling.types import LabelRun, RolloutOutcome, RolloutSampler, StepLabel, params_json


@dataclass(frozen=True)
class MCConfig:
    """Monte-Carlo labeler settings.

    >>> MCConfig(n_rollouts=8, adaptive_round=4).rounds_max
    2
    """

    n_rollouts: int = DEFAULT_N_ROLLOUTS  # rollouts per step prefix (Math-Shepherd's N = 8)
    early_stop: bool = False  # stop a solution at its first MC = 0 step; later steps False by convention
    adaptive_round: int | None = None  # None = fixed N; k = rounds of k, stop a step once one rollout is correct
    monotone: bool = True  # hard label of step k = some prefix >= k reached gold; False = per prefix (Math-Shepherd)
    adaptive: bool = False  # adaptive_min rollouts first; a step whose rollouts split gets up to adaptive_max
    adaptive_min: int = ADAPTIVE_MIN  # rollouts of every step when adaptive; enough when they agree
    adaptive_max: int = ADAPTIVE_MAX  # rollouts of a step whose first adaptive_min split, when adaptive
    max_rollouts_per_partition: int | None = None  # budget of one labeler (a partition); None = unbounded

    def __post_init__(self) -> None:
        if self.n_rollouts < 1:
            raise ValueError(f"n_rollouts={self.n_rollouts}: an MC estimate needs >= 1 rollout; Math-Shepherd uses 8")
        if self.adaptive_round is not None and not 1 <= self.adaptive_round <= self.n_rollouts:
            raise ValueError(f"adaptive_round={self.adaptive_round} must be in 1..n_rollouts={self.n_rollouts}, "
                             "or None for a fixed number of rollouts per step")
        check_adaptive(self.adaptive_min, self.adaptive_max)
        if self.adaptive and self.adaptive_round is not None:
            raise ValueError("adaptive and adaptive_round are two ways to stop early; set one of them")
        check_budget("max_rollouts_per_partition", self.max_rollouts_per_partition)

    @property
    def rounds_max(self) -> int:
        """Sampler rounds one step can take."""
        if self.adaptive:
            return 1 if self.adaptive_min == self.adaptive_max else 2
        k = self.adaptive_round or self.n_rollouts
        return -(-self.n_rollouts // k)

    @property
    def first_want(self) -> int:
        """Rollouts asked for a step in its first round."""
        return self.adaptive_min if self.adaptive else self.adaptive_round or self.n_rollouts

    @property
    def step_max(self) -> int:
        """The most rollouts one step can take."""
        return self.adaptive_max if self.adaptive else self.n_rollouts


@dataclass
class _Step:
    want: int
    outcomes: list[RolloutOutcome] = field(default_factory=list)
    done: bool = False

    @property
    def n_correct(self) -> int:
        return sum(o.is_correct is True for o in self.outcomes)


class MCLabeler:
    """Monte-Carlo labeler; ``name`` becomes ``step_labels.method``; ``budget`` spans every ``label`` call."""

    def __init__(self, config: MCConfig | None = None, name: str = "mc") -> None:
        self.config = config or MCConfig()
        self.name = name
        self.budget = RolloutBudget(self.config.max_rollouts_per_partition)

    def _first_want(self) -> int:
        return self.config.first_want

    def label(self, solutions: Sequence[SolutionToLabel], sampler: RolloutSampler, *,
              skip: Collection[str] = ()) -> LabelRun:
        """Label every step of ``solutions`` not in ``skip``; one sampler call per round (per wave under a budget)."""
        todo = [s for s in solutions if s.solution_id not in skip and s.steps]
        charged: dict[str, int] = {}  # prefix_hash -> outcomes already charged: shared prefixes cost once
        labels: list[StepLabel] = []
        done: list[SolutionToLabel] = []
        calls = 0
        rest = todo
        while rest:
            wave = self._admit(rest)
            if not wave:
                break
            rest = rest[len(wave):]
            steps, stopped, n = self._estimate(wave, sampler)
            new = self._labels(wave, steps, stopped, charged)
            self.budget.refund(sum(self._worst_case(s) for s in wave) - sum(lb.cost_rollouts for lb in new))
            labels += new
            done += wave
            calls += n
        extra = {"budget_stopped": True, "unlabeled_by_budget": len(rest)} if rest else {}
        return LabelRun(method=self.name, labels=tuple(labels), new_rollouts=tuple(sampler.drain_new_rows()),
                        cost_rollouts=sum(lb.cost_rollouts for lb in labels),
                        cost_tokens=sum(lb.cost_tokens for lb in labels), sampler_calls=calls,
                        solution_ids=tuple(s.solution_id for s in done), extra=extra)

    def _worst_case(self, sol: SolutionToLabel) -> int:
        return len(sol.steps) * self.config.step_max

    def _admit(self, todo: list[SolutionToLabel]) -> list[SolutionToLabel]:
        """The leading solutions whose worst case the budget reserves (all of them without a budget); none, and the
        budget stopped, when even the first does not fit what is left after every earlier wave gave back."""
        if self.budget.limit is None:
            return list(todo)
        wave = []
        for sol in todo:
            if not self.budget.fits(self._worst_case(sol)):
                break
            self.budget.take(self._worst_case(sol))
            wave.append(sol)
        if not wave:
            self.budget.take(self._worst_case(todo[0]))  # refused: marks the budget stopped
        return wave

    def _estimate(self, todo: list[SolutionToLabel], sampler: RolloutSampler
                  ) -> tuple[dict[tuple[str, int], _Step], dict[str, int], int]:
        """Every step's outcomes, the early-stopped step of each solution, and the sampler calls made."""
        steps: dict[tuple[str, int], _Step] = {}
        for sol in todo:
            first = [0] if self.config.early_stop else range(len(sol.steps))
            steps.update({(sol.solution_id, k): _Step(self._first_want()) for k in first})
        stopped: dict[str, int] = {}  # early stop: solution -> its MC = 0 step
        by_id = {s.solution_id: s for s in todo}
        calls = 0
        while pending := [(key, st) for key, st in steps.items() if not st.done]:
            results = sampler.sample([by_id[sid].target(k) for (sid, k), _ in pending], [st.want for _, st in pending])
            calls += 1
            for ((sid, k), st), outcomes in zip(pending, results, strict=True):
                self._update(st, outcomes)
                if st.done and self.config.early_stop:
                    if st.outcomes and st.n_correct == 0:
                        stopped[sid] = k
                    elif k + 1 < len(by_id[sid].steps):
                        steps[(sid, k + 1)] = _Step(self._first_want())
        return steps, stopped, calls

    def _update(self, st: _Step, outcomes: list[RolloutOutcome]) -> None:
        short = len(outcomes) < st.want  # the engine failed on this prefix: asking again would loop
        st.outcomes = list(outcomes)
        c = self.config
        if c.adaptive:
            st.done = short or st.want >= c.adaptive_max or settled(st.outcomes)
            st.want = c.adaptive_max
        elif short or st.want >= c.n_rollouts or (c.adaptive_round and st.n_correct > 0):
            st.done = True
        else:
            st.want = min(c.n_rollouts, st.want + (c.adaptive_round or c.n_rollouts))

    def _labels(self, todo: list[SolutionToLabel], steps: dict[tuple[str, int], _Step],
                stopped: dict[str, int], charged: dict[str, int]) -> list[StepLabel]:
        params = params_json(self.name, self.config)
        labels: list[StepLabel] = []
        for sol in todo:
            rows = []
            for k in range(len(sol.steps)):
                st = steps.get((sol.solution_id, k))
                if st is None:  # after an early stop
                    rows.append(dict(soft_label=None, hard_label=False, status=STATUS_BY_CONVENTION, n_rollouts=0,
                                     n_correct=0, cost_rollouts=0, cost_tokens=0))
                    continue
                h = sol.target(k).prefix_hash
                fresh = st.outcomes[charged.get(h, 0):]
                charged[h] = max(charged.get(h, 0), len(st.outcomes))
                n = len(st.outcomes)
                rows.append(dict(soft_label=st.n_correct / n if n else None, hard_label=st.n_correct > 0 if n else None,
                                 status=STATUS_LABELED if n else STATUS_UNVERIFIABLE, n_rollouts=n,
                                 n_correct=st.n_correct, cost_rollouts=len(fresh),
                                 cost_tokens=sum(o.completion_tokens for o in fresh)))
            if self.config.monotone:
                _make_monotone(rows)
            first_error = first_error_of([r["hard_label"] for r in rows])
            labels += [StepLabel(solution_id=sol.solution_id, problem_id=sol.problem_id, step_idx=k, method=self.name,
                                 first_error=first_error, params_json=params, **row) for k, row in enumerate(rows)]
        return labels


def _make_monotone(rows: list[dict]) -> None:
    """Turn per-prefix hard labels True up to the last prefix that reached gold (unknown labels stay None).

    >>> rows = [{"hard_label": h} for h in (False, True, False, False)]
    >>> _make_monotone(rows); [r["hard_label"] for r in rows]
    [True, True, False, False]
    """
    reached = False
    for row in reversed(rows):
        reached = reached or row["hard_label"] is True
        if reached and row["hard_label"] is False:
            row["hard_label"] = True

