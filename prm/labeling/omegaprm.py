"""OmegaPRM step labels (Luo et al. 2024): first errors by binary search inside an MCTS, many questions
in lockstep so each round is ONE sampler call holding every question's pending MC estimate.

Mapping onto the input solutions: each wrong sampled solution is a (root, rollout) pair of its
question's pool, so a search on it locates exactly that solution's first error. Labels per solution:

* steps whose prefix the tree estimated: ``soft_label`` = MC, ``hard_label`` = MC > 0, ``labeled``;
* other steps of a solution with a known first error ``e``: ``hard_label = step < e``, no soft label,
  ``by_convention`` (the binary search implies them: a later good prefix makes earlier steps good, and
  steps after an error stay wrong); correct solutions (final answer right) get ``e = -1`` this way;
* solutions never searched (screened out, budget spent) keep only their estimated steps, or no row.

Row costs: a state's rollouts are charged to the first row that uses its estimate; rollouts of states
no row uses (root extras, off-solution states) go to the question's first row, so rows sum to the
question's cost whenever the question emits a row. :class:`LabelRun` totals are always complete.

``max_rollouts_per_partition`` is one budget over every ``label`` call of the labeler (a partition in
:func:`prm.labeling.label_partition`), reserved before each estimate in question order; when it runs out the
searches stop where they are (as at ``max_rollouts``) and ``extra["budget_stopped"]`` says so. ``start_hints``
(solution id -> the step a PRM puts the first error at) only changes where a search starts
(:mod:`prm.labeling.omega_search`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from typing import Any

from prm.datagen import SolutionToLabel
from prm.format import labels_from_first_error
from prm.labeling.constants import STATUS_BY_CONVENTION, STATUS_LABELED
from prm.labeling.omega_search import OmegaPRMConfig, QuestionSearch
from prm.labeling.spending import RolloutBudget
from prm.labeling.types import LabelRun, RolloutSampler, StepLabel, params_json


def run_lockstep(searches: Sequence[QuestionSearch], sampler: RolloutSampler, progress: Any = None) -> int:
    """Drive all searches to the end; each round makes one sampler call. Returns the number of calls."""
    calls = 0
    while True:
        pending = [(s, t) for s in searches if not s.done and (t := s.next_target()) is not None]
        if not pending:
            return calls
        results = sampler.sample([t for _, t in pending], [s.wants() for s, _ in pending])
        calls += 1
        for (search, target), outcomes in zip(pending, results, strict=True):
            search.deliver(target, outcomes)
        if progress is not None:
            progress.update(1)


class OmegaPRMLabeler:
    """OmegaPRM labeler; ``name`` becomes ``step_labels.method``; ``budget`` spans every ``label`` call."""

    def __init__(self, config: OmegaPRMConfig | None = None, name: str = "omegaprm") -> None:
        self.config = config or OmegaPRMConfig()
        self.name = name
        self.budget = RolloutBudget(self.config.max_rollouts_per_partition)

    def searches(self, solutions: Sequence[SolutionToLabel], skip: Collection[str] = (),
                 start_hints: Mapping[str, int] | None = None) -> list[QuestionSearch]:
        """One search per problem over the solutions not in ``skip``, in first-seen problem order."""
        by_problem: dict[str, list[SolutionToLabel]] = defaultdict(list)
        for sol in solutions:
            if sol.solution_id not in skip:
                by_problem[sol.problem_id].append(sol)
        return [QuestionSearch(group, self.config, budget=self.budget, start_hints=start_hints)
                for group in by_problem.values()]

    def label(self, solutions: Sequence[SolutionToLabel], sampler: RolloutSampler, *,
              skip: Collection[str] = (), start_hints: Mapping[str, int] | None = None) -> LabelRun:
        """Search every question in lockstep and turn the trees into step labels; ``start_hints`` maps a
        solution id to the step a PRM puts its first error at (where its binary search starts)."""
        searches = self.searches(solutions, skip, start_hints)
        calls = run_lockstep(searches, sampler)
        params = params_json(self.name, self.config)
        labels = [label for search in searches for label in self.extract(search, params)]
        return LabelRun(
            method=self.name, labels=tuple(labels), new_rollouts=tuple(sampler.drain_new_rows()),
            cost_rollouts=sum(s.rollouts_used for s in searches), cost_tokens=sum(s.tokens_used for s in searches),
            sampler_calls=calls, solution_ids=tuple(sol.solution_id for s in searches for sol in s.solutions),
            extra={"searches": sum(len(s.selections) for s in searches),
                   "screened_out": sum(s.screened_out for s in searches),
                   "states": sum(len(s.tree) for s in searches),
                   "first_errors_located": sum(len(s.first_error) for s in searches),
                   **({"budget_stopped": True} if self.budget.stopped else {})})

    def extract(self, search: QuestionSearch, params: str) -> list[StepLabel]:
        """Labels of the input solutions of one finished search (see the module docstring)."""
        charged: set[str] = set()
        labels: list[StepLabel] = []
        for sol in search.solutions:
            first_error = -1 if sol.is_correct is True else search.first_error.get(sol.solution_id)
            convention = labels_from_first_error(len(sol.steps), first_error)
            for k in range(len(sol.steps)):
                h = sol.target(k).prefix_hash
                state = search.tree.get(h)
                common = dict(solution_id=sol.solution_id, problem_id=sol.problem_id, step_idx=k, method=self.name,
                              first_error=first_error, params_json=params)
                if state is not None and state.outcomes:
                    fresh = h not in charged
                    charged.add(h)
                    n_correct = sum(o.is_correct is True for o in state.outcomes)
                    labels.append(StepLabel(
                        soft_label=n_correct / len(state.outcomes), hard_label=n_correct > 0, status=STATUS_LABELED,
                        n_rollouts=len(state.outcomes), n_correct=n_correct,
                        cost_rollouts=len(state.outcomes) if fresh else 0,
                        cost_tokens=sum(o.completion_tokens for o in state.outcomes) if fresh else 0, **common))
                elif first_error is not None:
                    labels.append(StepLabel(soft_label=None, hard_label=convention[k],
                                            status=STATUS_BY_CONVENTION, n_rollouts=0, n_correct=0, **common))
        if labels:  # overhead no row used: root extras, states off the input solutions
            rest_r = search.rollouts_used - sum(lb.cost_rollouts for lb in labels)
            rest_t = search.tokens_used - sum(lb.cost_tokens for lb in labels)
            head = labels[0]
            labels[0] = replace(head, cost_rollouts=head.cost_rollouts + rest_r, cost_tokens=head.cost_tokens + rest_t)
        return labels
