"""MC and OmegaPRM on the real vLLM engine (the session's tiny policy): rows, costs and cache sharing."""

from __future__ import annotations

import pytest

from prm.datagen import sample_solution_rows
from prm.datagen.targets import SolutionToLabel
from prm.labeling import MCConfig, OmegaPRMConfig, backend_sampler, get_labeler
from prm.models import prompter_for
from prm.tasks import ArithmeticSourceConfig, generate_arithmetic
from warehouse.schemas import STEP_LABELS
from warehouse.validate import validate_rows

pytestmark = pytest.mark.slow


def test_mc_then_omegaprm_label_real_solutions_through_one_cache(vllm_backend, tiny_policy_dir) -> None:
    problems = [r.to_row() for r in generate_arithmetic(ArithmeticSourceConfig(n_ops=(8,), per_level=3), seed=1)]
    prompt = prompter_for(str(tiny_policy_dir))
    sols, steps, _ = sample_solution_rows(vllm_backend, problems, prompt, model="policy", n=2, seed=0,
                                          max_tokens=160)
    gold = {p["problem_id"]: p for p in problems}
    to_label = []
    for s in sols:
        problem = gold[s["problem_id"]]
        own = [t for t in steps if t["solution_id"] == s["solution_id"]]
        to_label.append(SolutionToLabel.from_rows(s, own, prompt(problem["question"]), problem["gold_answer"]))
    to_label = [s for s in to_label if s.steps]
    assert to_label, "the policy produced no steps at all"
    sampler = backend_sampler(vllm_backend, model="policy", seed=0, max_tokens=160)

    mc = get_labeler("mc", MCConfig(n_rollouts=2)).label(to_label, sampler)
    n_steps = sum(len(s.steps) for s in to_label)
    assert len(mc.labels) == n_steps
    prefixes = {s.target(k).prefix_hash for s in to_label for k in range(len(s.steps))}
    assert mc.cost_rollouts == 2 * len(prefixes) and mc.cost_tokens > 0  # a shared prefix is paid once
    validate_rows("step_labels", STEP_LABELS, [{**r, "run_id": "t", "created_at": 0, "source": "s", "day": "d"}
                                               for r in mc.rows()])
    fresh_before, reused_before = sampler.fresh_rollouts, sampler.reused_rollouts

    omega = get_labeler("omegaprm", OmegaPRMConfig(k=2, max_searches=4, screen=False)).label(to_label, sampler)
    assert {lb.solution_id for lb in omega.labels} == {s.solution_id for s in to_label}
    fresh = sampler.fresh_rollouts - fresh_before
    reused = sampler.reused_rollouts - reused_before
    assert reused + fresh == omega.cost_rollouts  # every outcome the search used: once, fresh or cached
    # Without search_generated OmegaPRM only estimates prefixes of the input solutions, which MC already
    # rolled out k=2 times each: all of it comes from the cache, none of it is paid again.
    assert fresh == 0 and omega.new_rollouts == ()
    searchable = [s.solution_id for s in to_label if s.is_correct is not True and len(s.steps) > 1]
    assert reused > 0, f"OmegaPRM reused no cached rollout; wrong solutions of 2+ steps to search: {searchable}"
    assert all(0.0 <= (lb.soft_label if lb.soft_label is not None else 0.0) <= 1.0 for lb in omega.labels)
