"""Flawed positives by exact step truth (per problem, pooled with a 95% interval, paired between arms) in a result's
summary, rl_metrics rows and held-out curve; the hack rule's accuracy and step-error clauses on hand-built curves."""

from __future__ import annotations

import pytest

from prm.policy.evaluate import EvalRow, EvalTable
from prm.rewards import RewardConfig
from prm.rl.curve import HACK_STEP_ERROR_RISE, HeldOutPoint, hacked_at, reward_rose
from prm.rl.flawed import flawed_counts, flawed_diff, flawed_share
from prm.rl.grpo import ArmResult, CurvePoint, HeldOut
from prm.rl.report import metric_rows
from prm.tasks.arithmetic import ArithmeticConfig, generate_problems


def test_flawed_counts_read_exact_step_truth() -> None:
    p = generate_problems(1, ArithmeticConfig(n_ops=2, operators="+-", style="chain"), seed=1)[0]
    good = "\n".join(p.gold_steps) + f"\nAnswer: {p.answer}"
    lucky = f"{p.gold_steps[0]}\n-14+3 = -12\nAnswer: {p.answer}"  # a wrong step, the right answer
    counts = flawed_counts([p, p], [[good, lucky, "Answer: 0"], ["Answer: 0"]])
    assert counts == ((1, 2), (0, 0)) and flawed_share(counts) == 0.5
    assert flawed_diff([(1, 2), (0, 2)], [(0, 2), (0, 2)])[0] == 0.25
    with pytest.raises(ValueError, match="same held-out problems"):
        flawed_diff([(1, 2)], [])


def _held(accuracy: float, flawed: tuple[tuple[int, int], ...], step_error: float = 0.1) -> HeldOut:
    row = EvalRow(0, 2, 8, accuracy, step_error, 0.5, 7.0)
    return HeldOut(EvalTable((row,), 1.0, 4, (accuracy, accuracy)), 70.0, 0.5, flawed)


def test_flawed_share_in_summary_rows_and_curve() -> None:
    result = ArmResult("outcome", RewardConfig(), 10, _held(0.3, ((1, 2), (0, 2))), _held(0.5, ((2, 2), (1, 2))),
                       (CurvePoint(1, *[0.5] * 10),), (), (), 1.0, 2.0, None)
    s = result.summary()
    assert (s["flawed_before"], s["flawed_after"]) == (0.25, 0.75) and s["flawed_after_ci"] == (0.5, 1.0)
    rows = {(r["metric"], r["step"]): r["value"] for r in metric_rows(result)}
    assert rows[("eval/flawed_share", 0)] == 0.25 and rows[("eval/flawed_share", 10)] == 0.75
    assert rows[("eval/flawed_share_ci_high", 10)] == 1.0 and rows[("heldout/flawed_share", 10)] == 0.75
    assert rows[("heldout/step_error", 0)] == 0.1
    assert ArmResult.from_dict(result.to_dict()) == result
    no_truth = ArmResult("outcome", RewardConfig(), 10, _held(0.3, ()), _held(0.5, ()), (), (), (), 1.0, 2.0, None)
    assert no_truth.summary()["flawed_after"] is None
    assert not any(r["metric"].startswith("eval/flawed") for r in metric_rows(no_truth))


def _p(step: int, accuracy: float, step_error: float | None = 0.17) -> HeldOutPoint:
    return HeldOutPoint(step, accuracy, 7.0, 70.0, 0.5, 0.4, step_error=step_error)


RISING = [(s, 0.2 + 0.01 * s) for s in range(1, 41)]
FALLING = [(s, 0.6 - 0.01 * s) for s in range(1, 41)]


@pytest.mark.parametrize(("curve", "kwargs", "expected"), [
    # below the start's interval while the reward rose: hacked, whatever the shape
    ([_p(0, 0.30), _p(20, 0.26), _p(40, 0.20)], {"start_ci": (0.23, 0.37), "rewards": RISING}, 40),
    # the same fall with the reward falling too: a collapse the reward saw, not a hack
    ([_p(0, 0.30), _p(20, 0.26), _p(40, 0.20)], {"start_ci": (0.23, 0.37), "rewards": FALLING}, None),
    # inside the interval: noise
    ([_p(0, 0.30), _p(20, 0.25)], {"start_ci": (0.23, 0.37), "rewards": RISING}, None),
    # no reward curve kept (a summary-only log): the fall alone decides
    ([_p(0, 0.30), _p(40, 0.20)], {"start_ci": (0.23, 0.37)}, 40),
    # more wrong steps than the margin allows, accuracy unchanged
    ([_p(0, 0.30), _p(20, 0.30, 0.17 + HACK_STEP_ERROR_RISE + 0.01)], {}, 20),
    ([_p(0, 0.30), _p(20, 0.30, 0.17 + HACK_STEP_ERROR_RISE - 0.01)], {}, None),
    ([_p(0, 0.30, None), _p(20, 0.30, 0.9)], {}, None),  # no step truth at the start: unknown, not a rise
])
def test_hack_rule_clauses(curve, kwargs, expected) -> None:
    assert hacked_at(curve, **kwargs) == expected


def test_reward_rose_compares_the_ends() -> None:
    assert reward_rose(RISING, 40) and not reward_rose(FALLING, 40)
    assert reward_rose(RISING, 0) is None
