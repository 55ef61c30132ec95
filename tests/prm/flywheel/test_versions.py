"""A flywheel model version is never overwritten (issue 38 item 3), a rejected one is never built on (item 4), and
round rows name the policy by registry name and version, not by folder (item 12).

Fast: model folders are config.json plus a weights file (what the registry's digest reads); no training."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from prm.flywheel import FlywheelConfig, round_source
from prm.flywheel.data import sample_round
from prm.flywheel.folders import new_version, round_dir
from prm.flywheel.lineage import (
    policy_name,
    prm_name,
    register_policy,
    register_prm,
    register_start,
    round_policy_model,
    round_prm,
    stale_prm,
    usable_prm,
)
from prm.flywheel.rounds import ROUND_DAY
from prm.models import weights_digest
from prm.training import TrainingSet
from warehouse import Warehouse, connect
from warehouse.model_registry import latest_model, lineage

CONFIG = FlywheelConfig(prm_tolerance=0.05)


def _weights(folder: Path, seed: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps({"model_type": "llama", "hidden_size": 8}))
    (folder / "model.safetensors").write_bytes(bytes([seed % 256]) * 64)
    return folder


def _ts(k: int) -> TrainingSet:
    return TrainingSet(rows=[], config=CONFIG.training_set(k), stats=None, warehouse_versions={"step_labels": k})


def _metrics(fresh: float, previous: float | None = None) -> dict:
    return {"f1_fresh": fresh} | ({} if previous is None else {"f1_previous": previous})


def _prm(wh: Warehouse, k: int, folder: Path, parent: Path, metrics: dict, run_id: str):
    return register_prm(wh, k, CONFIG, folder, _ts(k), parent, metrics, run_id=run_id)


def test_rerunning_round_0_after_two_rounds_leaves_every_model_and_parent_in_place(wh: Warehouse,
                                                                                   tmp_path: Path) -> None:
    start = _weights(tmp_path / "start", 1)
    register_start(wh, start, CONFIG, run_id="run-a")
    prm0 = _weights(tmp_path / "r0" / "prm-a", 2)
    _prm(wh, 0, prm0, start, _metrics(0.6), "run-a")
    policy0 = _weights(tmp_path / "r0" / "rl-a" / "policy", 3)
    register_policy(wh, 0, CONFIG, policy0, start, prm0, 1, {"acc_before": 0.3, "acc_after": 0.3}, run_id="run-a")
    prm1 = _weights(tmp_path / "r1" / "prm-a", 4)
    _prm(wh, 1, prm1, prm0, _metrics(0.62, 0.6), "run-b")

    # flywheel_prm re-materialized for round 0: different weights, registered again.
    prm0_again = _weights(tmp_path / "r0" / "prm-b", 5)
    _prm(wh, 0, prm0_again, start, _metrics(0.7), "run-c")

    con = connect(wh.root)
    rows = con.execute("SELECT version, parent_version, uri, training_json FROM models").fetchall()
    registered = {version for version, *_ in rows}
    for version, parent, uri, training in rows:
        assert parent is None or parent in registered, f"{version} names unregistered parent {parent}"
        reward = json.loads(training or "{}").get("reward_prm")
        assert reward is None or reward in registered, f"{version} rewards with unregistered {reward}"
        assert Path(uri).is_dir()
    assert [m.version for m in lineage(wh.root, weights_digest(prm1))] == [
        weights_digest(prm1), weights_digest(prm0), weights_digest(start)]
    assert round_prm(wh.root, 0) == prm0_again  # the rerun is round 0's newest PRM
    # ... but round 1's chain still grew from the first one: that is the stale PRM later rounds compare with.
    assert stale_prm(wh.root, usable_prm(wh.root, 1, CONFIG, "test")) == prm0


def test_a_new_version_gets_its_own_folder_and_identical_weights_keep_theirs(tmp_path: Path) -> None:
    parent = round_dir(tmp_path, 0)
    first, _ = new_version(parent, "prm", lambda out: _weights(out, 7))
    second, value = new_version(parent, "prm", lambda out: _weights(out, 8) and "built")
    assert first != second and value == "built"
    assert first.name == f"prm-{weights_digest(first)}" and (first / "model.safetensors").read_bytes()[0] == 7
    again, _ = new_version(parent, "prm", lambda out: _weights(out, 7))
    assert again == first
    rl, _ = new_version(parent, "rl", lambda out: _weights(out / "policy", 9), weights="policy")
    assert rl.name == f"rl-{weights_digest(rl / 'policy')}"
    assert sorted(p.name for p in parent.iterdir()) == sorted([first.name, second.name, rl.name])  # no leftovers


def test_a_build_that_fails_leaves_no_version(tmp_path: Path) -> None:
    def broken(out: Path) -> None:
        _weights(out, 1)
        raise RuntimeError("killed")

    with pytest.raises(RuntimeError, match="killed"):
        new_version(tmp_path, "prm", broken)
    assert list(tmp_path.iterdir()) == []


def test_a_prm_the_blocking_rule_rejects_stays_registered_and_is_never_built_on(wh: Warehouse,
                                                                                tmp_path: Path) -> None:
    start = _weights(tmp_path / "start", 1)
    prm0 = _weights(tmp_path / "prm0", 2)
    _prm(wh, 0, prm0, start, _metrics(0.6), "a")
    good = _weights(tmp_path / "prm1-good", 3)
    _prm(wh, 1, good, prm0, _metrics(0.6, 0.6), "b")
    bad = _weights(tmp_path / "prm1-bad", 4)
    entry = _prm(wh, 1, bad, prm0, _metrics(0.2, 0.6), "c")
    assert entry.status == "rejected" and "new PRM F1 0.200 vs previous 0.600" in entry.status_note
    assert round_prm(wh.root, 1) == good  # "latest" skips the rejected version
    newest = latest_model(wh.root, "prm", source=round_source(1), name=prm_name(1), include_rejected=True)
    assert newest.version == weights_digest(bad) and [m.version for m in lineage(wh.root, newest.version)][1] == \
        weights_digest(prm0)
    # Rejected again under the version that was good: no accepted PRM is left for round 1, and RL says why.
    _prm(wh, 1, good, prm0, _metrics(0.1, 0.6), "d")
    with pytest.raises(LookupError, match=r"round 1's RL rewards with round 1's prm, whose version \w+ was rejected "
                                          r"\(new PRM F1 0.100 vs previous 0.600"):
        usable_prm(wh.root, 1, CONFIG, "round 1's RL rewards with")


def test_keep_last_hands_on_the_last_accepted_prm_past_rejected_rounds_but_never_past_a_missing_one(
        wh: Warehouse, tmp_path: Path) -> None:
    keep = replace(CONFIG, on_rejected_prm="keep_last")
    start = _weights(tmp_path / "start", 1)
    prm0 = _weights(tmp_path / "prm0", 2)
    _prm(wh, 0, prm0, start, _metrics(0.6), "a")
    _prm(wh, 1, _weights(tmp_path / "prm1", 3), prm0, _metrics(0.2, 0.6), "b")  # rejected
    _prm(wh, 2, _weights(tmp_path / "prm2", 4), prm0, _metrics(0.1, 0.6), "c")  # rejected
    for k in (1, 2):
        handed = usable_prm(wh.root, k, keep, "test")
        assert (handed.round, Path(handed.uri)) == (0, prm0)
        with pytest.raises(LookupError, match=rf"round {k}'s prm, whose version \w+ was rejected"):
            usable_prm(wh.root, k, CONFIG, "test")
    with pytest.raises(LookupError, match="round 3's prm, which is not registered"):
        usable_prm(wh.root, 3, keep, "test")  # a round never built is not skipped
    with pytest.raises(ValueError, match="on_rejected_prm='skip' must be one of"):
        replace(CONFIG, on_rejected_prm="skip")


def test_a_missing_f1_names_a_fix() -> None:
    from prm.flywheel.checks import prm_no_worse

    verdict = prm_no_worse(2, {"f1_fresh": 0.5, "n_test_wrong": 0, "n_test_right": 4}, 0.05)
    assert not verdict.passed
    assert "(0 with a wrong step, 4 all correct)" in verdict.description and "raise per_level" in verdict.description


def test_round_rows_name_the_policy_by_registry_version_so_a_moved_folder_reuses_them(wh: Warehouse,
                                                                                      tmp_path: Path) -> None:
    policy = _weights(tmp_path / "checkout-a" / "round-0" / "rl" / "policy", 6)
    model = round_policy_model(1, CONFIG, policy)
    assert model == f"{policy_name(0)}@{weights_digest(policy)}" and str(tmp_path) not in model
    source = round_source(1)
    wh.write("problems", [{"problem_id": "p1", "task": "arith_word", "split": "test", "question": "1+1?",
                           "gold_answer": "2", "n_gold_steps": 1}], source=source, day=ROUND_DAY)
    sols = [{"solution_id": f"s{i}", "problem_id": "p1", "sample_idx": i, "text": "1+1 = 2", "n_steps": 1,
             "is_correct": True, "status": "ok", "model": model} for i in range(CONFIG.n_samples)]
    steps = [{"solution_id": s["solution_id"], "problem_id": "p1", "step_idx": 0, "text": "1+1 = 2",
              "char_start": 0, "char_end": 7, "is_correct_truth": True} for s in sols]
    wh.write("solutions", sols, source=source, day=ROUND_DAY, run_id="first")
    wh.write("steps", steps, source=source, day=ROUND_DAY, run_id="first")
    moved = tmp_path / "checkout-b" / "policy"
    shutil.copytree(policy, moved)

    def no_engine():
        pytest.fail("the round's samples were written by this policy version: nothing should be sampled again")

    kept = sample_round(wh, 1, CONFIG, moved, no_engine, run_id="second")
    assert kept.reused_from_run == "first" and kept.policy == model
