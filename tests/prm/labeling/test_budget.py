"""A rollout budget per partition (max_rollouts_per_partition) stops MC and OmegaPRM when spent."""

from __future__ import annotations

import pytest

from prm.labeling import MCConfig, OmegaPRMConfig
from prm.labeling.mc import MCLabeler
from prm.labeling.omegaprm import OmegaPRMLabeler
from prm.labeling.resume import label_in_chunks
from prm.labeling.spending import RolloutBudget

STEPS = ["a", "b", "bad", "c"]
WRONG_AT_5 = ["ok"] * 5 + ["bad", "ok", "ok"]


def test_mc_budget_labels_whole_solutions_in_order_then_stops(oracle_cls, sampler_of, solution):
    sols = [solution(f"s{i}", f"p{i}", STEPS) for i in range(3)]
    labeler = MCLabeler(MCConfig(n_rollouts=8, max_rollouts_per_partition=70))
    run = labeler.label(sols, sampler_of(oracle_cls()))
    assert run.solution_ids == ("s0", "s1")  # 32 each: the third does not fit in the 6 left
    assert {lb.solution_id for lb in run.labels} == {"s0", "s1"} and len(run.labels) == 8
    assert run.cost_rollouts == 64 <= 70 and labeler.budget.spent == 64
    assert run.extra == {"budget_stopped": True, "unlabeled_by_budget": 1}
    assert all(lb.n_rollouts == 8 for lb in run.labels)  # no step is cut short: labels stay fixed-N labels


def test_mc_budget_gives_back_what_adaptive_steps_did_not_use(oracle_cls, sampler_of, solution):
    sols = [solution(f"s{i}", f"p{i}", STEPS) for i in range(3)]
    config = MCConfig(adaptive=True, adaptive_min=4, adaptive_max=16, max_rollouts_per_partition=100)
    sampler = sampler_of(oracle_cls(pattern=(True,)))  # every step settles after 4: 16 per solution
    run = MCLabeler(config).label(sols, sampler)
    # worst case 4 x 16 = 64 per solution: one at a time fits, and each gives back 48 it did not use
    assert run.solution_ids == ("s0", "s1", "s2") and run.cost_rollouts == 48 and run.extra == {}
    assert sampler.call_sizes == [4, 4, 4]  # three waves of one solution


def test_the_budget_spans_chunks_and_a_stop_is_final(oracle_cls, sampler_of, solution):
    sols = [solution(f"s{i}", f"p{i}", STEPS[: 1 + i % 4]) for i in range(8)]
    labeler = MCLabeler(MCConfig(n_rollouts=8, max_rollouts_per_partition=60))
    runs = list(label_in_chunks(labeler, sols, sampler_of(oracle_cls()), max_solutions=2))
    labeled = [sid for run in runs for sid in run.solution_ids]
    assert labeled == ["s0", "s1", "s2"]  # 8 + 16 + 24 = 48; s3 (32) does not fit and nothing after it starts
    assert sum(run.cost_rollouts for run in runs) == 48 and labeler.budget.stopped
    assert [run.extra.get("budget_stopped", False) for run in runs] == [False, True, True, True]


def test_omegaprm_budget_is_shared_by_every_question(oracle_cls, sampler_of, solution):
    sols = [s for q in range(3) for s in (solution(f"c{q}", f"p{q}", ["ok"] * 8), solution(f"w{q}", f"p{q}",
                                                                                           WRONG_AT_5))]
    free = OmegaPRMLabeler().label(sols, sampler_of(oracle_cls(pattern=(True, False))))
    assert free.cost_rollouts == 3 * 24 and "budget_stopped" not in free.extra
    labeler = OmegaPRMLabeler(OmegaPRMConfig(max_rollouts_per_partition=50))
    run = labeler.label(sols, sampler_of(oracle_cls(pattern=(True, False))))
    assert run.cost_rollouts == 48 <= 50 and run.extra["budget_stopped"] is True
    assert run.extra["first_errors_located"] == 0  # every search stopped before its third estimate
    w0 = [lb for lb in run.labels if lb.solution_id == "w0"]
    assert {lb.step_idx: lb.hard_label for lb in w0} == {3: True, 5: False}  # only the estimated steps: no guess
    assert sum(lb.cost_rollouts for lb in run.labels) == run.cost_rollouts


def test_budget_validation_and_arithmetic():
    with pytest.raises(ValueError, match=r"max_rollouts_per_partition=0 must be in \[1, 1000000000\]"):
        MCConfig(max_rollouts_per_partition=0)
    with pytest.raises(ValueError, match="max_rollouts_per_partition=-5"):
        OmegaPRMConfig(max_rollouts_per_partition=-5)
    unbounded = RolloutBudget()
    assert unbounded.take(10**12) and not unbounded.stopped
