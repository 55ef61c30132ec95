"""Costs on the books: every labeler's rows carry what their labels used (rollout methods' rows sum to the run's
cost; progress carries the MC rollouts it rests on; formal checks cost none)."""

from __future__ import annotations

from prm.labeling import MCConfig, get_labeler
from prm.labeling.mc import MCLabeler
from prm.labeling.progress import ProgressLabeler

STEPS = ["a", "b", "bad", "c"]


def test_progress_rows_carry_the_costs_of_the_mc_rows_they_rest_on(oracle_cls, sampler_of, solution):
    sols = [solution("s", "p", STEPS), solution("t", "p", ["a", "bad"])]
    mc = MCLabeler(MCConfig(n_rollouts=4)).label(sols, sampler_of(oracle_cls()))
    solutions = [{"solution_id": s.solution_id, "problem_id": "p", "is_correct": False, "status": "ok",
                  "model": "policy"} for s in sols]
    run = ProgressLabeler().label({"step_labels": mc.rows(), "solutions": solutions})
    mc_cost = {(lb.solution_id, lb.step_idx): (lb.cost_rollouts, lb.cost_tokens) for lb in mc.labels}
    assert {(lb.solution_id, lb.step_idx): (lb.cost_rollouts, lb.cost_tokens) for lb in run.labels} == mc_cost
    assert run.cost_rollouts == mc.cost_rollouts == 4 * 5  # the shared prefix "a" is charged once
    assert run.sampler_calls == 0 and run.new_rollouts == ()  # nothing new was sampled


def test_formal_labels_cost_no_rollouts() -> None:
    steps = [{"solution_id": "a", "problem_id": "p", "step_idx": 0, "text": "2+3 = 5"}]
    run = get_labeler("sympy").label({"steps": steps, "problems": [{"problem_id": "p", "task": "arith_chain"}]})
    assert run.rows() and {(r["cost_rollouts"], r["cost_tokens"]) for r in run.rows()} == {(0, 0)}
