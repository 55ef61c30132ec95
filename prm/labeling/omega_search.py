"""OmegaPRM's search for one question: state tree, rollout pool, selection and binary search.

A state is a step prefix (the prompt plus the first steps of some trajectory, rendered from its spans by
:mod:`prm.format`), keyed by its prefix_hash. The pool holds
(state, wrong rollout) pairs; each search selects ``argmax Q + U`` over it, with

    Q(s, r) = alpha ** (1 - MC(s)) * beta ** (len(r) / L)      len(r) in tokens
    U(s)    = c_puct * sqrt(sum over states N(s')) / (1 + N(s))

then binary-searches r's steps for the first one after which the prefix can no longer reach the
answer (MC > 0: move right, MC = 0: move left). The selected pair leaves the pool for good, as does
any pair whose full step sequence already had its first error located; N(s) of the selected state
grows by one, so U really decays (public ports left N at 0). MC of a prefix is estimated once per
tree: a prefix reached by two searches reuses its estimate.

The policy's sampled solutions are root rollouts: they set MC(root) for screening and the wrong ones
enter the pool as (root, solution) pairs, so a search on one yields that solution's first error.

Spending (:mod:`prm.labeling.spending`): with ``adaptive`` a state's MC is first estimated from ``adaptive_min``
rollouts and topped up to ``adaptive_max`` when they split (the search's move, MC > 0 or not, is then already
decided); a shared :class:`~prm.labeling.spending.RolloutBudget` (the labeler's ``max_rollouts_per_partition``)
is reserved before every estimate, beside the question's own ``max_rollouts``. A start hint per input solution
(``start_hints``: the step a PRM puts its first error at) makes the binary search probe that step's prefixes first
(``e + 1`` steps, then ``e``); every probe stays inside the search's interval, so with a monotone MC the search
finds the same first error, and with a right hint it needs one or two estimates.

This module has no sampler: :class:`QuestionSearch` says which prefix it needs next and is fed the
outcomes, so :mod:`prm.labeling.omegaprm` can run many questions in lockstep.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from prm.datagen import RolloutTarget, SolutionToLabel, prefix_target
from prm.format import Segmented
from prm.labeling.constants import (
    DEFAULT_N_ROLLOUTS,
    OMEGA_ALPHA,
    OMEGA_BETA,
    OMEGA_C_PUCT,
    OMEGA_LENGTH_TOKENS,
    OMEGA_MAX_SEARCHES,
)
from prm.labeling.spending import ADAPTIVE_MAX, ADAPTIVE_MIN, RolloutBudget, check_adaptive, check_budget, settled
from prm.labeling.types import RolloutOutcome
from prm.tasks import stable_id


@dataclass(frozen=True)
class OmegaPRMConfig:
    """OmegaPRM settings; defaults are the paper's.

    >>> OmegaPRMConfig(k=8, max_rollouts=4)
    Traceback (most recent call last):
    ...
    ValueError: max_rollouts=4 is below k=8: no MC estimate would fit; raise it or set None
    """

    alpha: float = OMEGA_ALPHA  # Q's weight on MC(s): alpha^(1-MC)
    beta: float = OMEGA_BETA  # Q's length penalty: beta^(len/L)
    length_tokens: int = OMEGA_LENGTH_TOKENS  # L, in tokens
    c_puct: float = OMEGA_C_PUCT  # exploration weight of U
    k: int = DEFAULT_N_ROLLOUTS  # rollouts per MC estimate of a state
    n_root_rollouts: int = 0  # extra root rollouts on top of the sampled solutions (screening, pool)
    screen: bool = True  # paper: skip questions whose root rollouts are all right or all wrong
    search_generated: bool = False  # also search wrong rollouts sampled mid-search (paper's tree growth)
    max_searches: int = OMEGA_MAX_SEARCHES  # binary searches per question
    max_rollouts: int | None = None  # rollouts per question (cached ones count too); None = unbounded
    adaptive: bool = False  # estimate a state from adaptive_min rollouts, adaptive_max when they split (k unused)
    adaptive_min: int = ADAPTIVE_MIN
    adaptive_max: int = ADAPTIVE_MAX
    max_rollouts_per_partition: int | None = None  # budget of one labeler (a partition); None = unbounded

    def __post_init__(self) -> None:
        if not (0 < self.alpha <= 1 and 0 < self.beta <= 1):
            raise ValueError(f"alpha={self.alpha}, beta={self.beta} must be in (0, 1]; the paper uses 0.5 and 0.9")
        if self.length_tokens < 1:
            raise ValueError(f"length_tokens={self.length_tokens} must be >= 1 token; the paper's L is 500")
        if self.c_puct < 0:
            raise ValueError(f"c_puct={self.c_puct} must be >= 0 (0 = no exploration); the paper uses 0.125")
        if self.k < 1 or self.n_root_rollouts < 0 or self.max_searches < 0:
            raise ValueError("k must be >= 1, n_root_rollouts and max_searches >= 0")
        check_adaptive(self.adaptive_min, self.adaptive_max)
        if self.max_rollouts is not None and self.max_rollouts < self.first_want:
            first = f"adaptive_min={self.adaptive_min}" if self.adaptive else f"k={self.k}"
            raise ValueError(f"max_rollouts={self.max_rollouts} is below {first}: no MC estimate would fit; "
                             "raise it or set None")
        check_budget("max_rollouts_per_partition", self.max_rollouts_per_partition)

    @property
    def first_want(self) -> int:
        """Rollouts of a state's first estimate."""
        return self.adaptive_min if self.adaptive else self.k


@dataclass
class State:
    """A prefix in the tree: the first ``n`` steps of trajectory ``seg``."""

    seg: Segmented
    n: int
    target: RolloutTarget
    outcomes: list[RolloutOutcome] = field(default_factory=list)
    visits: int = 0  # N(s): times a pair of this state was selected

    @property
    def steps(self) -> tuple[str, ...]:
        return self.seg.steps[: self.n]

    @property
    def mc(self) -> float | None:
        """Share of rollouts reaching gold; None before the estimate."""
        return sum(o.is_correct is True for o in self.outcomes) / len(self.outcomes) if self.outcomes else None


@dataclass(frozen=True)
class Pair:
    """A (state, wrong rollout) candidate; ``solution_id`` is set when the rollout is an input solution."""

    state: str  # prefix_hash of the state
    full: Segmented  # the whole trajectory: the state's steps, then the rollout's
    start: int  # steps of ``full`` that belong to the state
    length: float  # rollout length in tokens
    solution_id: str | None = None

    @property
    def steps(self) -> tuple[str, ...]:
        """The rollout's steps after the state."""
        return self.full.steps[self.start :]


@dataclass
class _Active:
    pair: Pair
    lo: int  # smallest step count still possibly wrong (all shorter prefixes of the rollout are good)
    hi: int  # a step count known wrong (the full rollout: it ended wrong)
    hints: list[int] = field(default_factory=list)  # step counts to probe first (a start hint), in order
    mid: int = 0  # the step count being estimated

    def next_mid(self) -> int:
        """The next step count to probe: the first hint still inside [lo, hi), else the middle."""
        self.hints = [n for n in self.hints if self.lo <= n < self.hi]
        self.mid = self.hints.pop(0) if self.hints else (self.lo + self.hi) // 2
        return self.mid


class QuestionSearch:
    """The whole OmegaPRM search of one question, driven by :meth:`next_target` / :meth:`deliver`."""

    def __init__(self, solutions: Sequence[SolutionToLabel], config: OmegaPRMConfig, *,
                 budget: RolloutBudget | None = None, start_hints: Mapping[str, int] | None = None) -> None:
        if not solutions or len({s.problem_id for s in solutions}) != 1:
            raise ValueError("a QuestionSearch takes the solutions of exactly one problem")
        self.config = config
        self.budget = budget or RolloutBudget()  # shared by every search of one labeler
        self.start_hints = _checked_hints(start_hints or {})
        self._topup: RolloutTarget | None = None  # adaptive: a split state to top up before the search moves
        self._reserved = 0  # rollouts the shared budget holds for the pending target
        self.solutions = list(solutions)
        self.anchor = solutions[0]
        root, _ = self._target(self.anchor.seg, 0)
        self.root = root.prefix_hash
        self.tree: dict[str, State] = {self.root: State(self.anchor.seg, 0, root)}
        self.pool: dict[tuple[str, tuple[str, ...]], Pair] = {}
        self.located: dict[tuple[str, ...], int] = {}  # full step sequence -> absolute first-error index
        self.first_error: dict[str, int] = {}  # input solution -> first error found by its search
        self.selections: list[Pair] = []  # selection log, in order
        self.rollouts_used = 0
        self.tokens_used = 0
        self.screened_out = False
        self.done = False
        self._active: _Active | None = None
        self._root_pending = config.n_root_rollouts > 0
        if not self._root_pending:
            self._screen()

    # --- tree and pool -------------------------------------------------------------------------
    def _target(self, full: Segmented, n: int) -> tuple[RolloutTarget, Segmented]:
        """The target of the first ``n`` steps of ``full`` and the trajectory it was rendered from: the input
        solution those steps begin, if any (rows anchor to it), else ``full``."""
        steps, a = full.steps[:n], self.anchor
        for sol in self.solutions:
            if steps and sol.steps[:n] == steps:
                return prefix_target(sol.solution_id, a.problem_id, a.prompt, sol.seg, n - 1, a.gold_answer), sol.seg
        sid = a.problem_id if not steps else stable_id("omega", a.problem_id, *steps)
        return prefix_target(sid, a.problem_id, a.prompt, full, n - 1, a.gold_answer), full

    def root_counts(self) -> tuple[int, int]:
        """(correct, total) over root rollouts: sampled solutions plus extra root rollouts.

        A solution or rollout that states no gradable answer (``is_correct`` None) did not reach gold, so
        it counts as wrong, as in the MC labeler.
        """
        extra = self.tree[self.root].outcomes
        correct = sum(s.is_correct is True for s in self.solutions) + sum(o.is_correct is True for o in extra)
        return correct, len(self.solutions) + len(extra)

    def _screen(self) -> None:
        correct, total = self.root_counts()
        if self.config.screen and (correct == 0 or correct == total):
            self.screened_out, self.done = True, True
            return
        for sol in self.solutions:
            if sol.is_correct is not True and sol.steps:
                self._add_pair(Pair(self.root, sol.seg, 0, sol.n_tokens, sol.solution_id))
        if self.config.search_generated:
            self._add_rollouts(self.root)

    def _add_pair(self, pair: Pair) -> None:
        key = (pair.state, pair.steps)
        if self.tree[pair.state].steps + pair.steps not in self.located and key not in self.pool:
            self.pool[key] = pair

    def _add_rollouts(self, key: str) -> None:
        state = self.tree[key]
        if not self.mc_of(key):  # MC = 0: the error is already in the prefix, its rollouts hold no new one
            return
        for o in state.outcomes:
            full = state.seg.then(state.n - 1, o.text)
            if o.is_correct is not True and len(full) > state.n:
                self._add_pair(Pair(key, full, state.n, float(o.completion_tokens)))

    def score(self, pair: Pair) -> float:
        """Q(s, r) + U(s)."""
        c = self.config
        state = self.tree[pair.state]
        q = c.alpha ** (1 - (self.mc_of(pair.state) or 0.0)) * c.beta ** (pair.length / c.length_tokens)
        total_visits = sum(s.visits for s in self.tree.values())
        return q + c.c_puct * math.sqrt(total_visits) / (1 + state.visits)

    def mc_of(self, key: str) -> float | None:
        """MC(s); the root's counts the sampled solutions as rollouts."""
        return self.root_mc() if key == self.root else self.tree[key].mc

    def root_mc(self) -> float:
        """MC of the root from all root rollouts (sampled solutions count)."""
        correct, total = self.root_counts()
        return correct / total if total else 0.0

    def select(self) -> Pair | None:
        """Pop argmax Q+U (first inserted wins ties), count the visit; None when the pool is empty."""
        if not self.pool:
            return None
        key = max(self.pool, key=lambda k: self.score(self.pool[k]))  # max keeps the first of equal scores
        pair = self.pool.pop(key)
        self.tree[pair.state].visits += 1
        self.selections.append(pair)
        return pair

    # --- driving -------------------------------------------------------------------------------
    def _budget_allows(self, n: int | None = None) -> bool:
        """Whether ``n`` more rollouts (a first estimate's) fit the question's ``max_rollouts``."""
        limit = self.config.max_rollouts
        return limit is None or self.rollouts_used + (self.config.first_want if n is None else n) <= limit

    def _reserve(self, n: int) -> bool:
        """Reserve ``n`` rollouts of the shared budget for the target about to be returned."""
        if not self.budget.take(n):
            return False
        self._reserved = n
        return True

    def next_target(self) -> RolloutTarget | None:
        """The prefix whose MC estimate (``k`` rollouts, or the root's extra ones) is needed next; None = done."""
        while not self.done:
            if self._root_pending:
                if self._reserve(self.config.n_root_rollouts):
                    return self.tree[self.root].target
                self.done = True  # no budget for the root rollouts: the question is not searched
                return None
            if self._topup is not None:
                state = self.tree[self._topup.prefix_hash]
                more = self.config.adaptive_max - len(state.outcomes)
                if self._budget_allows(more) and self._reserve(more):
                    return self._topup
                self._topup = None  # no budget for the top-up: the first estimate decides the move
                self._estimated(state)
                continue
            if self._active is None and not self._start():
                self.done = True
                return None
            assert self._active is not None
            act = self._active
            if act.lo >= act.hi:
                self._finish(act)
                continue
            mid = act.next_mid()
            n = act.pair.start + mid
            target, seg = self._target(act.pair.full, n)
            state = self.tree.get(target.prefix_hash)
            if state is not None and state.outcomes:  # estimated before: reuse, never pay twice
                self._move(act, mid, state)
                continue
            if not self._budget_allows() or not self._reserve(self.config.first_want):
                self.done = True  # budget spent mid-search: this pair stays without a first error
                return None
            self.tree.setdefault(target.prefix_hash, State(seg, n, target))
            return target
        return None

    def wants(self) -> int:
        """Outcomes wanted for the current target."""
        if self._root_pending:
            return self.config.n_root_rollouts
        return self.config.adaptive_max if self._topup is not None else self.config.first_want

    def deliver(self, target: RolloutTarget, outcomes: list[RolloutOutcome]) -> None:
        """Record the outcomes sampled for ``target`` (the last :meth:`next_target`)."""
        state = self.tree[target.prefix_hash]
        fresh = list(outcomes)[len(state.outcomes):]  # a top-up returns the earlier outcomes first
        state.outcomes = list(outcomes)
        self.rollouts_used += len(fresh)
        self.tokens_used += sum(o.completion_tokens for o in fresh)
        self.budget.refund(self._reserved - len(fresh))
        self._reserved = 0
        if self._root_pending:
            self._root_pending = False
            self._screen()
            return
        topped_up, self._topup = self._topup is not None, None
        if not outcomes:  # the engine failed on this prefix: give the pair up rather than guess
            self._active = None
            return
        if (self.config.adaptive and not topped_up and len(outcomes) == self.config.adaptive_min
                and len(outcomes) < self.config.adaptive_max and not settled(outcomes)):
            self._topup = target  # split: top it up before moving (next_target asks for it)
            return
        self._estimated(state)

    def _estimated(self, state: State) -> None:
        """A state's estimate is final: grow the pool from it (``search_generated``) and move the search."""
        if self.config.search_generated:
            self._add_rollouts(state.target.prefix_hash)
        assert self._active is not None
        self._move(self._active, self._active.mid, state)

    def _start(self) -> bool:
        if len(self.selections) >= self.config.max_searches or not self._budget_allows():
            return False
        while (pair := self.select()) is not None:
            if self.tree[pair.state].steps + pair.steps not in self.located:
                self._active = _Active(pair, lo=1, hi=len(pair.steps), hints=self._hint_probes(pair))
                return True
            if len(self.selections) >= self.config.max_searches:
                return False
        return False

    def _hint_probes(self, pair: Pair) -> list[int]:
        """Step counts to probe first for an input solution with a start hint ``e``: ``e + 1`` (dead if the hint is
        right), then ``e`` (alive if it is right); none without a hint."""
        e = self.start_hints.get(pair.solution_id) if pair.solution_id is not None else None
        if e is None or e < 0:
            return []
        e = min(e, len(pair.steps) - 1)
        return [e + 1, e]

    def _move(self, act: _Active, mid: int, state: State) -> None:
        if state.mc:
            act.lo = mid + 1  # the prefix can still reach the answer: the first error is later
        else:
            act.hi = mid  # it cannot: the first error is at or before step mid

    def _finish(self, act: _Active) -> None:
        base = self.tree[act.pair.state].steps
        full = base + act.pair.steps
        first = len(base) + act.hi - 1
        self.located[full] = first
        for sol in self.solutions:  # every input solution with this exact text shares the result
            if sol.steps == full and sol.is_correct is not True:
                self.first_error[sol.solution_id] = first
        for key in [k for k in self.pool if self.tree[k[0]].steps + k[1] == full]:
            del self.pool[key]
        self._active = None


def _checked_hints(hints: Mapping[str, int]) -> dict[str, int]:
    """Start hints as ints (a step index; -1 or less = the PRM saw no error: no hint); a TypeError otherwise."""
    out = {}
    for sid, step in hints.items():
        if isinstance(step, bool) or not isinstance(step, int):
            raise TypeError(f"start hint of {sid!r} is {step!r}; give the step index a PRM puts the first error at")
        out[sid] = step
    return out
