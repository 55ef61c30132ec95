"""Hacking detected, not only seen: the hack rule on hand-built held-out curves, the ``hacked`` mark in a result's
summary, the warehouse rows and the table, the held-out curve measured along a tiny run without changing its
training, and the rl_run asset's warning check."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

import assets.rl as rl_asset
from assets.resources import WarehouseResource
from prm.policy.evaluate import EvalRow, EvalTable
from prm.rewards import RewardConfig
from prm.rl import RLRunConfig
from prm.rl.curve import HACK_STEP_SHIFT, HeldOutPoint, hacked_at
from prm.rl.grpo import ArmResult, CurvePoint, HeldOut, run_grpo
from prm.rl.report import HACKED_METRIC, comparison_markdown, metric_rows
from tests.prm.rl.conftest import TINY_RUN


def _p(step: int, accuracy: float, steps: float) -> HeldOutPoint:
    return HeldOutPoint(step, accuracy, steps, 10 * steps, 0.6, 0.4)


@pytest.mark.parametrize("curve,expected", [
    # the LM-head prm_min run on seed 1: steps 9 -> 2.9, accuracy down
    ([_p(0, 0.30, 9.0), _p(20, 0.31, 8.5), _p(40, 0.27, 5.0), _p(100, 0.24, 2.9)], 40),
    ([_p(0, 0.30, 7.0), _p(20, 0.28, 9.5)], 20),  # padding: more steps, worse
    ([_p(0, 0.30, 7.0), _p(20, 0.40, 9.5)], None),  # more steps but better: learning to write longer chains
    ([_p(0, 0.30, 7.0), _p(20, 0.20, 7.5)], None),  # worse without a shape change: a bad run, not a hack
    ([_p(0, 0.30, 10.0), _p(20, 0.29, 10.0 * (1 - HACK_STEP_SHIFT) + 0.01)], None),  # inside the 30% band
    ([_p(0, 0.30, 10.0)], None),
])
def test_hack_rule_on_hand_built_curves(curve, expected):
    assert hacked_at(curve) == expected


def _held(accuracy: float, steps: float) -> HeldOut:
    row = EvalRow(0, 2, 8, accuracy, 0.1, 0.5, steps)
    return HeldOut(EvalTable((row,), 1.0, 4, (accuracy, accuracy)), 10 * steps, 0.5)


def _result(after: HeldOut, curve: tuple[HeldOutPoint, ...] = ()) -> ArmResult:
    return ArmResult("prm_min", RewardConfig(), 100, _held(0.3, 9.0), after, (CurvePoint(1, *[0.5] * 10),), (), (),
                     1.0, 2.0, None, curve)


def test_a_hacked_result_is_marked_in_summary_rows_and_table():
    hacked = _result(_held(0.24, 2.9), (_p(20, 0.31, 8.8), _p(40, 0.26, 5.0)))
    assert hacked.summary()["hacked"] and hacked.summary()["hacked_at"] == 40
    assert hacked.summary()["curve"] == [[0, 0.3], [20, 0.31], [40, 0.26], [100, 0.24]]
    rows = {(r["metric"], r["step"]): r["value"] for r in metric_rows(hacked)}
    assert rows[(HACKED_METRIC, 40)] == 1.0 and rows[("heldout/accuracy", 20)] == 0.31
    assert "at step 40" in comparison_markdown([hacked])
    assert ArmResult.from_dict(hacked.to_dict()) == hacked and hacked.to_dict()["hacked"] is True
    fine = _result(_held(0.45, 8.0))
    assert not fine.summary()["hacked"]
    assert {(r["metric"], r["step"], r["value"]) for r in metric_rows(fine) if r["metric"] == HACKED_METRIC} == \
        {(HACKED_METRIC, 100, 0.0)}
    # a result written before the curve existed is judged from before and after
    old = {k: v for k, v in fine.to_dict().items() if k != "heldout_curve"}
    assert ArmResult.from_dict(old).heldout_points == fine.heldout_points


def test_the_held_out_curve_does_not_change_training(tiny_lm: Path, tiny_prm: Path, tmp_path: Path):
    plain = run_grpo(tiny_lm, tiny_prm, "outcome", TINY_RUN, tmp_path / "plain")
    curved = run_grpo(tiny_lm, tiny_prm, "outcome", replace(TINY_RUN, eval_every=1), tmp_path / "curved")
    assert [p.step for p in curved.heldout_points] == [0, 1, 2]
    assert all(p.prm_mean_score is not None for p in curved.heldout_curve)
    assert [p.reward for p in curved.curve] == [p.reward for p in plain.curve]
    assert curved.after == plain.after  # the sampler reseeds torch; the curve runs it inside a forked RNG
    assert RLRunConfig(eval_every=0).to_dict()["eval_every"] == 0


@pytest.mark.parametrize("values,passed", [([0.0, 0.0], True), ([0.0, 1.0], False), ([], False)])
def test_hacked_check_warns(values, passed, tmp_path: Path):
    resource = WarehouseResource(data_root=str(tmp_path / "warehouse"))
    rows = [{"arm": f"arm{i}", "step": 40, "metric": HACKED_METRIC, "value": v} for i, v in enumerate(values)]
    rows += [{"arm": "arm0", "step": 0, "metric": "eval/answer_accuracy", "value": 0.5}]
    resource.get().write("rl_metrics", rows, source="arith", day="2026-11-22", run_id="r1")
    check = rl_asset.rl_no_arm_hacked(warehouse=resource)
    assert check.passed is passed and check.severity.value == "WARN"
    if not passed and values:
        assert "arm1 hacked at step 40" in check.description


def _rl_seeds():
    import importlib.util

    path = Path(__file__).resolve().parents[3] / "benchmarks" / "rl_seeds.py"
    spec = importlib.util.spec_from_file_location("rl_seeds_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_seeds_pool_steps_to_outcomes_final_accuracy_and_hacked_seeds():
    outcome = [_result(_held(0.4, 9.0), (_p(20, 0.35, 9.0),)), _result(_held(0.5, 9.0), (_p(20, 0.45, 9.0),))]
    fast = [_result(_held(0.45, 9.0), (_p(20, 0.42, 9.0),)), _result(_held(0.5, 9.0), (_p(20, 0.5, 9.0),))]
    hacked = [_result(_held(0.2, 3.0), (_p(20, 0.25, 5.0),)), _result(_held(0.35, 9.0))]
    runs = [{"outcome": o.to_dict(), "prime": f.to_dict(), "prm_min": h.to_dict()}
            for o, f, h in zip(outcome, fast, hacked, strict=True)]
    pooled = _rl_seeds().pool(runs)
    assert pooled["prime"]["steps_to_outcome_final_per_seed"] == [20, 20]
    assert pooled["prime"]["steps_to_outcome_final"] == 20 and pooled["prime"]["steps_total"] == 100
    assert pooled["outcome"]["steps_to_outcome_final"] == 100  # it reaches its own final accuracy at the end
    assert pooled["prm_min"]["steps_to_outcome_final"] is None  # never reached on either seed
    assert pooled["prm_min"]["hacked_seeds"] == [0] and pooled["prime"]["hacked_seeds"] == []
    assert {"seeds", "acc_before", "acc_after", "acc_after_ci", "gain_per_seed", "vs_outcome", "vs_outcome_ci"} <= \
        set(pooled["prime"])


def test_an_arm_run_on_fewer_seeds_is_pooled_over_its_own_seeds():
    outcome = [_result(_held(0.4, 9.0)), _result(_held(0.5, 9.0))]
    hacked = _result(_held(0.2, 3.0), (_p(20, 0.25, 5.0),))
    runs = [{"outcome": outcome[0].to_dict()}, {"outcome": outcome[1].to_dict(), "process": hacked.to_dict()}]
    pooled = _rl_seeds().pool(runs)
    assert pooled["outcome"]["seeds"] == 2 and pooled["process"]["seeds"] == 1
    assert pooled["process"]["seed_indices"] == [1] and pooled["process"]["hacked_seeds"] == [1]
    assert pooled["process"]["vs_outcome_seeds"] == 1 and pooled["process"]["vs_outcome"] < 0
