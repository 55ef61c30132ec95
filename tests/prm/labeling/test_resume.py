"""Registry and resumability: crash after a chunk, resume, same labels, no duplicates, no repaid rollouts."""

from __future__ import annotations

import pytest

from prm.labeling import ActiveConfig, MCConfig, get_labeler
from prm.labeling.registry import labelers_needing
from prm.labeling.resume import label_in_chunks

WRONGS = [["ok"] * i + ["bad"] + ["ok"] * (7 - i) for i in range(8)]


def _solutions(solution):
    sols = []
    for i, wrong in enumerate(WRONGS):
        sols += [solution(f"c{i}", f"p{i}", ["ok"] * 8), solution(f"w{i}", f"p{i}", wrong)]
    return sols


def _key(row):
    return (row["solution_id"], row["step_idx"], row["method"])


@pytest.mark.parametrize("method", labelers_needing("rollouts"))
def test_interrupted_run_resumes_to_the_uninterrupted_result(oracle_cls, sampler_of, solution, method):
    sols = _solutions(solution)
    # active's default scores with the trained PRM in models/prm; with none, it labels every solution (by OmegaPRM)
    labeler = get_labeler(method, ActiveConfig(prm=None) if method == "active" else None)
    full_engine = oracle_cls()
    full = [r for run in label_in_chunks(labeler, sols, sampler_of(full_engine), max_solutions=4) for r in run.rows()]

    engine = oracle_cls()  # the same engine serves both attempts
    labels, rollouts = [], []
    for i, run in enumerate(label_in_chunks(labeler, sols, sampler_of(engine), max_solutions=4)):
        labels += run.rows()
        rollouts += run.new_rollouts
        if i == 1:
            break  # crash after two chunks were written
    done = {r["solution_id"] for r in labels}
    resumed = sampler_of(engine, rollouts)
    for run in label_in_chunks(labeler, sols, resumed, skip=done, max_solutions=4):
        assert not done & set(run.solution_ids)
        labels += run.rows()
        rollouts += run.new_rollouts
    assert len({_key(r) for r in labels}) == len(labels)  # no duplicate (solution_id, step_idx, method)
    assert sorted(labels, key=_key) == sorted(full, key=_key)
    assert len({r["rollout_id"] for r in rollouts}) == len(rollouts)
    assert sum(engine.drawn.values()) == sum(full_engine.drawn.values())  # nothing paid twice


def test_a_restart_over_written_rollouts_pays_nothing(oracle_cls, sampler_of, solution):
    sols = _solutions(solution)[:4]
    first = get_labeler("mc").label(sols, sampler_of(oracle_cls()))
    again_sampler = sampler_of(oracle_cls(), list(first.new_rollouts))
    again = get_labeler("mc").label(sols, again_sampler)
    assert again_sampler.fresh_rollouts == 0 and again.new_rollouts == ()
    # every outcome behind every label came from the written rollouts
    assert again_sampler.reused_rollouts == sum(r["n_rollouts"] for r in again.rows()) == 4 * 8 * 8
    assert again.rows() == first.rows()  # cost counts rollouts used, cached or not


def test_registry_rejects_unknown_names_and_wrong_configs():
    with pytest.raises(ValueError, match="unknown; use one of"):
        get_labeler("nope")
    with pytest.raises(TypeError, match="takes a OmegaPRMConfig"):
        get_labeler("omegaprm", MCConfig())
    assert get_labeler("mc", MCConfig(n_rollouts=4)).config.n_rollouts == 4
