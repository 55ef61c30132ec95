"""The prefix_hash cache and the engine-backed sampler."""

from __future__ import annotations

import pytest

from prm.datagen.rollouts import RolloutTarget
from prm.generation import BackendInfo, Completion
from prm.labeling import MCConfig, OmegaPRMConfig, backend_sampler, get_labeler


def _target(text: str) -> RolloutTarget:
    return RolloutTarget("s", "p", 0, f"Qp\n{text}\n", "1")


def test_stored_rollouts_come_first_and_only_the_missing_count_is_sampled(oracle_cls, sampler_of):
    oracle = oracle_cls(pattern=(False,))
    a, b = _target("a"), _target("b")
    stored = oracle.rows([a], 3, seed=7)
    for row in stored:
        row["is_correct"] = True  # mark them, so the test sees they are served first
    oracle.asked.clear()
    sampler = sampler_of(oracle, stored)
    out = sampler.sample([a, b, b], [5, 2, 4])
    assert [o.is_correct for o in out[0]] == [True, True, True, False, False]
    assert len(out[1]) == 2 and len(out[2]) == 4 and out[1] == out[2][:2]
    assert oracle.asked == [("a",), ("b",)]  # b once, for its largest want; a for 2 more only
    # a: 3 stored + 2 fresh; b: 4 fresh, of which the first request's 2 are served again to the second
    assert (sampler.fresh_rollouts, sampler.reused_rollouts) == (6, 3 + 2)
    new = sampler.drain_new_rows()
    assert sorted((r["prefix_hash"], r["rollout_idx"]) for r in new if r["prefix_hash"] == a.prefix_hash) == [
        (a.prefix_hash, 3), (a.prefix_hash, 4)]
    assert sampler.drain_new_rows() == []
    assert sampler.sample([a], 5) == [out[0]] and sampler.engine_calls == 2  # fully cached now
    assert (sampler.fresh_rollouts, sampler.reused_rollouts) == (6, 5 + 5)


def test_error_rows_are_kept_but_never_served(oracle_cls):
    from prm.labeling.sampler import CachedRolloutSampler

    def source(targets, n, seed):
        return [{"prefix_hash": t.prefix_hash, "rollout_idx": j, "text": "", "finish_reason": "error"}
                for t in targets for j in range(n)]

    sampler = CachedRolloutSampler(source)
    assert sampler.sample([_target("a")], 2) == [[]]
    assert len(sampler.drain_new_rows()) == 2


class _ScriptedBackend:
    """Answers every prefix with 'Answer: 1' (right when gold is 1), records requests."""

    def __init__(self) -> None:
        self.requests = []

    @property
    def info(self) -> BackendInfo:
        return BackendInfo("fake", "fake", 512)

    def generate(self, requests):
        self.requests += list(requests)
        return [Completion(texts=("Answer: 1",) * r.n, finish_reasons=("stop",) * r.n, prompt_tokens=5,
                           completion_tokens=(4,) * r.n, index=i) for i, r in enumerate(requests)]

    def close(self) -> None:
        pass


def test_backend_sampler_grades_and_reseeds_top_ups():
    backend = _ScriptedBackend()
    sampler = backend_sampler(backend, model="policy", seed=3)
    t = RolloutTarget("s", "p", 0, "Qp\nx\n", "1")
    first = sampler.sample([t], 2)[0]
    again = sampler.sample([t], 4)[0]
    assert [o.is_correct for o in again] == [True] * 4 and again[:2] == first
    assert [r.n for r in backend.requests] == [2, 2] and backend.requests[0].seed != backend.requests[1].seed
    rows = sampler.drain_new_rows()
    assert [r["rollout_idx"] for r in rows] == [0, 1, 2, 3] and len({r["rollout_id"] for r in rows}) == 4


def test_backend_sampler_refuses_rollouts_of_another_policy():
    with pytest.raises(ValueError, match="not 'policy'"):
        backend_sampler(_ScriptedBackend(), [{"model": "other", "prefix_hash": "h", "rollout_idx": 0}], model="policy")


@pytest.mark.parametrize(
    "k, fresh",
    [
        (4, 0),  # OmegaPRM's k equals MC's n: every estimate it needs is already cached
        (8, 3 * 4),  # k above MC's n: each of its 3 prefixes is topped up by 4, the first 4 come from the cache
    ],
)
def test_omegaprm_after_mc_counts_what_the_cache_served(oracle_cls, sampler_of, solution, k, fresh):
    sols = [solution("c", "p", ["ok"] * 8), solution("w", "p", ["ok"] * 5 + ["bad", "ok", "ok"])]
    sampler = sampler_of(oracle_cls(pattern=(True, False)))
    mc = get_labeler("mc", MCConfig(n_rollouts=4)).label(sols, sampler)
    # 11 distinct prefixes (the first 5 are shared): each paid once, and served again to the other solution
    assert (sampler.fresh_rollouts, sampler.reused_rollouts) == (mc.cost_rollouts, 5 * 4) == (11 * 4, 20)
    fresh_before, reused_before = sampler.fresh_rollouts, sampler.reused_rollouts
    asked_before = len(sampler.oracle.asked)

    omega = get_labeler("omegaprm", OmegaPRMConfig(k=k)).label(sols, sampler)
    reused = sampler.reused_rollouts - reused_before
    assert sampler.fresh_rollouts - fresh_before == len(omega.new_rollouts) == fresh
    assert reused == 3 * 4 > 0  # the binary search's prefixes (4, 6 and 5 steps) were all estimated by MC
    assert reused + fresh == omega.cost_rollouts  # every outcome the search used: once, fresh or cached
    assert [len(s) for s in sampler.oracle.asked[asked_before:]] == ([4, 6, 5] if fresh else [])
    assert {lb.first_error for lb in omega.labels if lb.solution_id == "w"} == {5}
