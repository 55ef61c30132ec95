"""The LM-head PRM against text its policy would never write: the reference floor, the off-policy rule measured
at training, perturbed negatives, and the reward's policy for flagged steps."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from prm.evaluation.perturbations import parse_equation
from prm.implicit_recipe import IMPLICIT_CONFIG_FILE, read_scoring_rule
from prm.models.constants import ARITH_POLICY_NAME
from prm.rewards import RewardConfig
from prm.rewards.rewarder import Rewarder
from prm.scoring import StepAssessment, assess_batch, load_prm
from prm.scoring.implicit_scorer import off_policy, token_log_ratios
from prm.tasks.arithmetic import ArithmeticConfig, generate_problems
from prm.training import PRMTrainConfig, train_prm
from prm.training.implicit import ImplicitPRMConfig
from tests.prm.training.test_lm_head import lm
from tests.prm.training.test_trainer import learnable_rows

LONG_RANDOM = "qzx7#kv" * 40


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    return learnable_rows(24, "train", 0) + learnable_rows(8, "val", 1)


def arithmetic_rows(n: int, split: str, seed: int) -> list[dict]:
    """Gold word-problem steps (good) and the same with the last value slipped by one (bad), in the shipped
    policy's own layout: a reference that has learned the text, so "off-policy" means something."""
    rows = []
    problems = generate_problems(n, ArithmeticConfig(n_ops=3, operators="+-", max_value=9, style="word"), seed=seed)
    for i, p in enumerate(problems):
        steps, labels = list(p.gold_steps), [True] * p.n_ops
        if i % 2:
            eq = parse_equation(steps[-1])
            steps[-1], labels[-1] = eq.text(eq.c + 1), False
        rows.append({"prompt": p.question, "completions": steps, "labels": labels, "split": split,
                     "solution_id": f"{split}{i}"})
    return rows


@pytest.fixture(scope="module")
def floored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rows = arithmetic_rows(24, "train", 0) + arithmetic_rows(8, "val", 1)
    config = PRMTrainConfig(base_model=ARITH_POLICY_NAME, max_steps=20, batch_size=8, ref_floor=0.05,
                            eval_steps=10_000, save_steps=10_000)
    return train_prm(rows, tmp_path_factory.mktemp("floor") / "prm", config)


QUESTION = generate_problems(1, ArithmeticConfig(n_ops=3, operators="+-", max_value=9, style="word"), seed=7)[0]


def test_a_token_the_reference_finds_unlikely_cannot_earn_reward_the_prm_does_not_give_it():
    logp = torch.log(torch.tensor([0.9, 0.002, 0.5]))
    ref = torch.log(torch.tensor([0.9, 1e-6, 0.5]))
    plain, floored = token_log_ratios(logp, ref, None), token_log_ratios(logp, ref, 0.05)
    assert plain[1] > 7  # PRIME's ratio: log(0.002 / 1e-6), the hole
    assert floored[1] < 0  # against the floor: log(0.002 / 0.05)
    assert floored[0] == plain[0] and floored[2] == plain[2]  # likely tokens read as before


def test_the_folder_records_its_floor_and_a_measured_off_policy_rule(floored: Path):
    recipe = json.loads((floored / IMPLICIT_CONFIG_FILE).read_text())
    assert recipe["ref_floor"] == 0.05
    floor, limit = read_scoring_rule(floored)
    assert floor == 0.05 and limit is not None and limit < 0
    scorer = load_prm(floored)
    assert scorer.ref_floor == 0.05 and scorer.ood_ref_logprob == limit


def test_hand_built_off_policy_steps_are_flagged_and_the_policys_own_are_not(floored: Path):
    scorer = load_prm(floored)
    gold = list(QUESTION.gold_steps)
    own = scorer.assess_steps(QUESTION.question, gold)
    strange = [scorer.assess_steps(QUESTION.question, [*gold[:1], step])[-1] for step in ("hello world", LONG_RANDOM)]
    assert [a.off_policy for a in own] == [False] * len(gold)
    assert [a.off_policy for a in strange] == [True, True]
    assert [a.score for a in own] == scorer.score_steps(QUESTION.question, gold)


def test_off_policy_rule_and_scorers_without_one():
    assert off_policy(-3.0, -2.0) is True and off_policy(-1.0, -2.0) is False and off_policy(-9.0, None) is None

    class Half:
        def score_batch(self, items, batch_size=None):
            return [[0.5] * len(steps) for _, steps in items]

    assert assess_batch(Half(), [("q", ["a", "b"])]) == [[StepAssessment(0.5, None)] * 2]


def test_the_reward_scores_a_flagged_step_as_wrong_unless_told_to_keep_it(floored: Path):
    scorer = load_prm(floored)
    gold = list(QUESTION.gold_steps)
    right, strange = "\n".join(gold), "\n".join([*gold[:2], "hello world"])
    default = Rewarder(scorer, RewardConfig(outcome_weight=0.0))
    keep = Rewarder(scorer, RewardConfig(outcome_weight=0.0, off_policy="keep"))
    r_right, r_strange = default.score([QUESTION.question] * 2, [right, strange])
    assert r_strange.steps.off_policy == (False, False, True)
    assert r_strange.reward == 0.0 < r_right.reward
    assert keep.score([QUESTION.question], [strange])[0].reward == pytest.approx(min(r_strange.steps.scores))


def test_configs_refuse_bad_floors_and_negatives():
    with pytest.raises(ValueError, match="ref_floor"):
        PRMTrainConfig(ref_floor=1.5)
    with pytest.raises(ValueError, match="negatives"):
        PRMTrainConfig(negatives=2.0)
    with pytest.raises(ValueError, match="negatives"):
        PRMTrainConfig(head="classifier", negatives=0.5)
    with pytest.raises(ValueError, match="negatives are step labels"):
        ImplicitPRMConfig(labels="outcome", negatives=0.5)
    with pytest.raises(ValueError, match="finite"):
        ImplicitPRMConfig(beta=float("nan"))
    with pytest.raises(ValueError, match="finite"):
        PRMTrainConfig(beta=float("inf"))
    with pytest.raises(ValueError, match="off_policy"):
        RewardConfig(off_policy="drop")


def test_negatives_change_training_and_repeat_under_a_seed(tiny_base: Path, rows: list[dict], tmp_path: Path):
    def scores(folder: Path) -> list[float]:
        return load_prm(folder).score_steps("3 plus 1", ["ok", "no", "hello"])

    plain = train_prm(rows, tmp_path / "plain", lm(tiny_base, max_steps=10))
    a = train_prm(rows, tmp_path / "a", lm(tiny_base, max_steps=10, negatives=0.5))
    b = train_prm(rows, tmp_path / "b", lm(tiny_base, max_steps=10, negatives=0.5))
    assert scores(a) == scores(b)
    assert scores(a) != scores(plain)
