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

    def __post_init__(self) -> None:
        if self.n_rollouts < 1:
            raise ValueError(f"n_rollouts={self.n_rollouts}: an MC estimate needs >= 1 rollout; Math-Shepherd uses 8")
        if self.adaptive_round is not None and not 1 <= self.adaptive_round <= self.n_rollouts:
            raise ValueError(f"adaptive_round={self.adaptive_round} must be in 1..n_rollouts={self.n_rollouts}, "
                             "or None for a fixed number of rollouts per step")

    @property
    def rounds_max(self) -> int:
        """Sampler rounds one step can take."""
        k = self.adaptive_round or self.n_rollouts
        return -(-self.n_rollouts // k)


@dataclass
class _Step:
    want: int
    outcomes: list[RolloutOutcome] = field(default_factory=list)
    done: bool = False

    @property
    def n_correct(self) -> int:
        return sum(o.is_correct is True for o in self.outcomes)


class MCLabeler:
    """Monte-Carlo labeler; ``name`` becomes ``step_labels.method``."""

    def __init__(self, config: MCConfig | None = None, name: str = "mc") -> None:
        self.config = config or MCConfig()
        self.name = name

    def _first_want(self) -> int:
        return self.config.adaptive_round or self.config.n_rollouts

    def label(self, solutions: Sequence[SolutionToLabel], sampler: RolloutSampler, *,
              skip: Collection[str] = ()) -> LabelRun:
        """Label every step of ``solutions`` not in ``skip``; one sampler call per round."""
        todo = [s for s in solutions if s.solution_id not in skip and s.steps]
        steps: dict[tuple[str, int], _Step] = {}
        cursor: dict[str, int] = {}  # early stop: the step being estimated; else unused
        for sol in todo:
            first = [0] if self.config.early_stop else range(len(sol.steps))
            steps.update({(sol.solution_id, k): _Step(self._first_want()) for k in first})
            cursor[sol.solution_id] = 0
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
        labels = self._labels(todo, steps, stopped)
        return LabelRun(method=self.name, labels=tuple(labels), new_rollouts=tuple(sampler.drain_new_rows()),
                        cost_rollouts=sum(lb.cost_rollouts for lb in labels),
                        cost_tokens=sum(lb.cost_tokens for lb in labels), sampler_calls=calls,
                        solution_ids=tuple(s.solution_id for s in todo))

    def _update(self, st: _Step, outcomes: list[RolloutOutcome]) -> None:
        short = len(outcomes) < st.want  # the engine failed on this prefix: asking again would loop
        st.outcomes = list(outcomes)
        if short or st.want >= self.config.n_rollouts or (self.config.adaptive_round and st.n_correct > 0):
            st.done = True
        else:
            st.want = min(self.config.n_rollouts, st.want + (self.config.adaptive_round or self.config.n_rollouts))

    def _labels(self, todo: list[SolutionToLabel], steps: dict[tuple[str, int], _Step],
                stopped: dict[str, int]) -> list[StepLabel]:
        params = params_json(self.name, self.config)
        charged: dict[str, int] = {}  # prefix_hash -> outcomes already charged: shared prefixes cost once
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

