"""Real TRL GRPO runs on tiny random models (CPU, transformers generation): two steps per arm.

The session's ``comparison`` fixture runs every arm once (~30 s on a busy 2-core box, mostly TRL's import
and the trainer's set-up); these tests read it.
"""

from __future__ import annotations

import json
import math

import pytest

from prm.metrics import bootstrap_mean_ci
from prm.policy import EvalRow, EvalTable
from prm.rewards import RewardConfig
from prm.rl import Comparison, RLRunConfig, compare_arms, metric_rows
from prm.rl.constants import PLOT_FILE, RESULT_FILE, SUMMARY_FILE, TABLE_FILE
from prm.rl.grpo import ArmResult, CurvePoint, HeldOut, load_result, reward_curve, run_key, use_vllm, window_mean
from prm.rl.report import comparison_markdown


def test_every_arm_runs_its_two_steps_and_reports_before_and_after(comparison: Comparison):
    assert [r.arm for r in comparison.results] == ["outcome", "prm_min", "prm_sum", "prm_min_prof"]
    for r in comparison.results:
        assert r.steps == 2
        assert [p.step for p in r.curve] == [1, 2]
        assert all(p.reward is not None and p.completion_length is not None for p in r.curve)
        assert all(p.outcome_reward is not None and p.n_steps is not None for p in r.curve)  # the adapter's logs
        assert [row.n_ops for row in r.after.table.rows] == [0, 1, 2]  # pooled, then per difficulty
        assert r.after.table.row(0).n_samples == 2 * 2 * 2  # eval_ops x eval_problems x eval_samples
        assert len(r.before.table.problem_accuracy) == len(r.after.table.problem_accuracy) == 2 * 2
        assert 0.0 <= r.after.accuracy <= 1.0 and 0.0 <= r.after.mean_min_step_score <= 1.0
        assert r.train_s > 0 and r.wall_s >= r.train_s


def test_the_starting_policy_is_measured_once_and_shared(comparison: Comparison):
    befores = {id(r.before) for r in comparison.results}
    assert len(befores) == 1


def test_arms_see_the_same_first_batch_and_differ_only_in_its_rewards(comparison: Comparison):
    """Same seed, data and starting weights: the first generation batch is identical in every arm; only the
    rewards given to it differ (the outcome arm pays for right answers only, a random policy has none)."""
    first = [r.first_batch for r in comparison.results]
    assert all(len(batch) == 8 for batch in first)  # batch_size completions
    texts = [[(s.question, s.completion) for s in batch] for batch in first]
    assert all(t == texts[0] for t in texts[1:])
    rewards = {r.arm: [s.reward for s in r.first_batch] for r in comparison.results}
    assert rewards["outcome"] == [0.0] * 8
    assert rewards["prm_min"] != rewards["outcome"]
    # sum and min agree only where a completion has at most one step
    one_step = [s.completion.count("\n") == 0 for s in comparison.results[0].first_batch]
    if not all(one_step):
        assert rewards["prm_sum"] != rewards["prm_min"]


def test_the_comparison_files_are_written(comparison: Comparison):
    out = comparison.plot.parent
    assert comparison.plot.name == PLOT_FILE and comparison.plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / TABLE_FILE).read_text().count("\n") == 2 + len(comparison.results)
    summary = json.loads((out / SUMMARY_FILE).read_text())
    assert [a["arm"] for a in summary["arms"]] == list(comparison.config.arms)
    for arm in summary["arms"]:  # benchmarks/rl.py's JSON arms are these rows
        low, high = arm["acc_gain_ci"]
        assert -1.0 <= low <= high <= 1.0 and len(arm["acc_before_ci"]) == len(arm["acc_after_ci"]) == 2
    result = json.loads((out / "prm_sum" / RESULT_FILE).read_text())
    assert result["summary"]["steps"] == 2 and result["reward"]["shaping"] == "sum"
    assert not [p for p in out.rglob(".*") if p.is_file()]  # no temp files left behind


def test_the_table_has_one_line_per_arm(comparison: Comparison):
    lines = comparison.markdown.splitlines()
    assert lines[0].startswith("| arm | steps | answer acc")
    assert [line.split(" | ")[0] for line in lines[2:]] == ["| outcome", "| prm_min", "| prm_sum", "| prm_min_prof"]
    assert all(" → " in line for line in lines[2:])


def test_metric_rows_fit_the_warehouse(comparison: Comparison, wh):
    rows = comparison.metric_rows()
    result = wh.write("rl_metrics", rows, source="arith", day="2026-11-22", run_id="r1", writer="rl_run")
    assert result.rows == len(rows)
    back = wh.read("rl_metrics").to_pylist()
    assert {r["arm"] for r in back} == {"outcome", "prm_min", "prm_sum", "prm_min_prof"}
    got = {(r["arm"], r["step"], r["metric"]): r["value"] for r in back}
    first = comparison.results[0]
    assert got[("outcome", 0, "eval/answer_accuracy")] == first.before.accuracy
    assert got[("outcome", 2, "eval/step_error_rate/ops=2")] == first.after.table.row(2).step_error_rate
    assert got[("prm_sum", 1, "train/reward")] == comparison.results[2].curve[0].reward
    assert (got[("outcome", 0, "eval/answer_accuracy_ci_low")], got[("outcome", 0, "eval/answer_accuracy_ci_high")]) \
        == first.before.accuracy_ci()
    assert ("outcome", 2, "eval/answer_accuracy_gain_ci_high") in got
    assert all(math.isfinite(v) for v in got.values())


def test_the_curve_skips_summaries_and_non_finite_values():
    history = [{"step": 1, "reward": 0.5, "reward_std": float("nan"), "a/n_steps": 3.0, "kl": 0.0},
               {"step": 2, "reward": 0.7, "a/outcome_reward": 1.0, "b/outcome_reward": 0.0},
               {"step": 2, "train_runtime": 12.0, "train_loss": 0.1}]
    curve = reward_curve(history, "a")
    assert [(p.step, p.reward, p.reward_std, p.n_steps, p.kl) for p in curve] == [(1, 0.5, None, 3.0, 0.0),
                                                                                   (2, 0.7, None, None, None)]
    assert curve[1].outcome_reward == 1.0  # the arm's own reward name, never another's


@pytest.mark.parametrize("values,last,expected", [
    ([1.0], True, 1.0), ([1.0, 2.0, 3.0], False, 1.0), (list(range(20)), True, 18.5), (list(range(20)), False, 0.5),
])
def test_window_mean(values, last, expected):
    assert window_mean(values, last) == expected


def test_vllm_is_refused_without_cuda():
    with pytest.raises(ValueError, match="generation='vllm' needs CUDA"):
        use_vllm(RLRunConfig(generation="vllm"), cuda=False)


def test_a_finished_comparison_resumes_by_reading_its_arms_back(comparison: Comparison, tiny_lm, tiny_prm):
    out = comparison.plot.parent
    again = compare_arms(tiny_lm, tiny_prm, comparison.config, out, resume=True)
    assert again.results == comparison.results  # train_s included: nothing was trained again
    other = RLRunConfig(**{**comparison.config.to_dict(), "learning_rate": 1.0})
    assert load_result(out / "outcome", run_key(tiny_lm, tiny_prm, other)) is None  # another config reruns
    assert load_result(out / "outcome", run_key(tiny_lm, tiny_prm, comparison.config)) == comparison.results[0]
    fewer = RLRunConfig(**{**comparison.config.to_dict(), "arms": ("outcome",)})  # the arms compared are not the key
    assert load_result(out / "outcome", run_key(tiny_lm, tiny_prm, fewer)) == comparison.results[0]


# --- accuracy intervals over held-out problems, on hand-built results (no training) --------------------------


def _held(accuracy: tuple[float, ...], samples: int = 4) -> HeldOut:
    n = len(accuracy)
    row = EvalRow(0, n, n * samples, sum(accuracy) / n if n else 0.0, 0.1, 0.5, 3.0)
    return HeldOut(EvalTable((row,), 1.0, samples, accuracy), 40.0, 0.5)


def _result(before: HeldOut, after: HeldOut) -> ArmResult:
    return ArmResult("outcome", RewardConfig(), 2, before, after, (CurvePoint(1, *[0.5] * 10),), (), (), 1.0, 2.0,
                     None)


def test_summary_carries_intervals_over_problems_and_a_paired_gain():
    """Every problem gains 0.25 while the problems differ widely: each accuracy's interval is wide, the paired
    gain's is the constant gain."""
    before, after = _held((0.0, 0.5, 0.25, 0.75)), _held((0.25, 0.75, 0.5, 1.0))
    result = _result(before, after)
    s = result.summary()
    assert s["acc_before_ci"] == bootstrap_mean_ci(before.table.problem_accuracy) == before.accuracy_ci()
    assert s["acc_after_ci"] == bootstrap_mean_ci(after.table.problem_accuracy)
    assert s["acc_before_ci"][0] < s["acc_before"] < s["acc_before_ci"][1]
    assert s["acc_gain_ci"] == pytest.approx((0.25, 0.25))
    assert ArmResult.from_dict(result.to_dict()) == result
    assert result.to_dict()["summary"]["acc_gain_ci"] == pytest.approx([0.25, 0.25])


def test_the_table_and_the_warehouse_rows_show_the_intervals():
    result = _result(_held((0.0, 0.5, 0.25, 0.75)), _held((0.25, 0.75, 0.5, 1.0)))
    line = comparison_markdown([result]).splitlines()[2]
    low, high = result.before.accuracy_ci()
    assert f"| 0.375 [{low:.2f}, {high:.2f}] → 0.625 [" in line
    assert "| +0.250 [+0.250, +0.250] |" in line
    got = {(r["step"], r["metric"]): r["value"] for r in metric_rows(result)}
    assert (got[(0, "eval/answer_accuracy_ci_low")], got[(0, "eval/answer_accuracy_ci_high")]) == (low, high)
    assert (got[(2, "eval/answer_accuracy_ci_low")], got[(2, "eval/answer_accuracy_ci_high")]) == \
        result.after.accuracy_ci()
    assert got[(2, "eval/answer_accuracy_gain_ci_low")] == pytest.approx(0.25)


def test_results_saved_without_per_problem_accuracy_have_no_interval():
    old = _result(_held(()), _held(()))
    s = old.summary()
    assert (s["acc_before_ci"], s["acc_after_ci"], s["acc_gain_ci"]) == (None, None, None)
    assert "[" not in comparison_markdown([old]).splitlines()[2]
    assert not [r for r in metric_rows(old) if "_ci_" in r["metric"]]


def test_a_gain_over_different_held_out_problems_is_refused():
    with pytest.raises(ValueError, match="same held-out problems"):
        _result(_held((0.0, 0.5, 1.0)), _held((0.0, 0.5))).summary()
    with pytest.raises(ValueError, match="same held-out problems"):
        _result(_held((0.0, 0.5), samples=4), _held((0.0, 0.5), samples=2)).summary()
