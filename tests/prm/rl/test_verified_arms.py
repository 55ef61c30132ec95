"""The first_error (VPPO), progrs (PROGRS) and flawed_penalty (FAPO) arms on hand-built groups: what each token or
completion earns, PROGRS' guarantee that a PRM never lifts a wrong answer above a right one, FAPO's bounded knob."""

from __future__ import annotations

import math

import pytest
import torch

from prm.rewards import reward_for
from prm.rl.config import ARMS, PROCESS_ARMS, RLRunConfig
from prm.rl.grpo import run_key
from prm.rl.process_grpo import ProcessConfig, mix_advantages, process_advantage_matrix
from prm.rl.verified_arms import first_error, flawed_reward, flawed_reward_config, progrs_bonus

NEW_ARMS = ("first_error", "progrs", "flawed_penalty")


def _outcome_advantages(outcomes: list[float], scale: str) -> list[float]:
    """GRPO's group advantage as TRL computes it (unbiased std + 1e-4), or unscaled (scale_rewards='none')."""
    mean = sum(outcomes) / len(outcomes)
    if scale == "none":
        return [o - mean for o in outcomes]
    std = math.sqrt(sum((o - mean) ** 2 for o in outcomes) / (len(outcomes) - 1))
    return [(o - mean) / (std + 1e-4) for o in outcomes]


def _progrs(outcomes: list[float], scores: list[float], scale: str) -> list[float]:
    n = len(outcomes)
    matrix = process_advantage_matrix([[]] * n, [[]] * n, [3] * n, n, 3, ProcessConfig(credit="progrs"),
                                      list(zip(outcomes, scores, strict=True)))
    mixed = mix_advantages(matrix, torch.tensor(_outcome_advantages(outcomes, scale)), ProcessConfig(credit="progrs"))
    return mixed[:, 0].tolist()


GROUPS = {
    "mixed": ([1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0], [0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.9, 0.95]),
    "one right, wrongs the PRM loves": ([1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0.0] + [1.0] * 6 + [0.0]),
    "seven right, one wrong": ([1.0] * 7 + [0.0], [0.0] * 7 + [1.0]),
    "pair": ([1.0, 0.0], [0.0, 1.0]),
    "all correct": ([1.0] * 4, [0.1, 0.9, 0.5, 0.2]),
    "all wrong": ([0.0] * 4, [0.1, 0.9, 0.5, 0.3]),
}


@pytest.mark.parametrize("scale", ["std", "none"])
@pytest.mark.parametrize("name", list(GROUPS))
def test_progrs_never_lets_a_wrong_answer_beat_a_right_one(name: str, scale: str) -> None:
    outcomes, scores = GROUPS[name]
    adv = _progrs(outcomes, scores, scale)
    right = [a for a, o in zip(adv, outcomes, strict=True) if o == 1.0]
    wrong = [a for a, o in zip(adv, outcomes, strict=True) if o == 0.0]
    if right and wrong:
        assert min(right) > max(wrong)
    # correct completions keep the outcome advantage alone; the wrong ones' bonus has mean 0
    outcome_adv = _outcome_advantages(outcomes, scale)
    assert [a for a, o in zip(adv, outcomes, strict=True) if o] == \
        pytest.approx([a for a, o in zip(outcome_adv, outcomes, strict=True) if o])
    bonus = progrs_bonus(outcomes, scores)
    assert sum(bonus) == pytest.approx(0.0, abs=1e-9)


def test_progrs_edge_cases() -> None:
    assert _progrs([1.0] * 4, [0.1, 0.9, 0.5, 0.2], "std") == [0.0] * 4  # all correct: outcome only (all 0)
    all_wrong = _progrs([0.0] * 4, [0.1, 0.9, 0.5, 0.3], "std")  # all wrong: the PRM ranks them, centred on 0
    assert all_wrong == pytest.approx([-0.35, 0.45, 0.05, -0.15]) and sum(all_wrong) == pytest.approx(0.0, abs=1e-6)
    one = _progrs([1.0, 1.0, 1.0, 0.0], [0.2, 0.3, 0.4, 0.99], "std")  # one wrong: its bonus is 0
    assert one == pytest.approx(_outcome_advantages([1.0, 1.0, 1.0, 0.0], "std"), abs=1e-6)
    assert progrs_bonus([None, 0.0, 0.0], [0.9, 0.2, math.nan]) == [0.0, 0.0, 0.0]  # ungraded, unscored: no bonus


def test_first_error_rewards_the_verified_prefix_and_penalises_the_rest() -> None:
    # two completions of two steps (tokens 0-1 step 0, 2-3 step 1, token 4 the answer line); the first errs at step 1
    scores, ends = [[0.9, 0.2], [0.8, 0.7]], [[1, 3], [1, 3]]
    matrix = process_advantage_matrix(scores, ends, [5, 5], 2, 5, ProcessConfig(credit="first_error"))
    prefix, error = 1 / math.sqrt(3), -math.sqrt(3)  # 3 verified steps and 1 error, normalised over the group
    assert matrix.flatten().tolist() == pytest.approx([prefix, prefix, error, error, 0.0] + [prefix] * 4 + [0.0])
    # every token carries its own step's value: more verified steps do not add up to more per token
    longer = process_advantage_matrix([[0.9, 0.9, 0.9], [0.9, 0.1, 0.1]], [[0, 1, 2], [0, 1, 2]], [3, 3], 2, 3,
                                      ProcessConfig(credit="first_error"))
    assert len({round(x, 9) for x in longer[0].tolist()}) == 1
    assert first_error([0.9, 0.4]) == 1 and first_error([0.6, math.nan]) == 2


def test_flawed_penalty_reduces_a_flawed_positive_only() -> None:
    for penalty in (0.0, 0.5, 1.0):
        config = flawed_reward_config(penalty)
        for outcome, scores in ((1.0, [0.9, 0.8]), (1.0, [0.9, 0.3]), (0.0, [0.9, 0.9]), (0.0, [0.1])):
            assert reward_for(config, scores, outcome).reward == pytest.approx(flawed_reward(outcome, scores, penalty))
    assert flawed_reward(1.0, [0.9, 0.3]) == 0.5 and flawed_reward(1.0, [0.9]) == 1.0


@pytest.mark.parametrize("penalty", [-0.1, 1.5, float("nan")])
def test_flawed_penalty_is_bounded(penalty: float) -> None:
    with pytest.raises(ValueError, match="flawed_penalty"):
        RLRunConfig(flawed_penalty=penalty)


def test_new_arms_are_registered_and_keyed_without_moving_the_others(tmp_path) -> None:
    config = RLRunConfig(arms=NEW_ARMS)
    assert set(NEW_ARMS) <= set(ARMS)
    assert (PROCESS_ARMS["first_error"].credit, PROCESS_ARMS["progrs"].credit) == ("first_error", "progrs")
    assert RLRunConfig(flawed_penalty=0.2).reward_config("flawed_penalty").prof_weight == pytest.approx(0.8)
    assert config.reward_config("outcome") is ARMS["outcome"]
    for folder in ("policy", "prm"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "config.json").write_text("{}")
    key = run_key(tmp_path / "policy", tmp_path / "prm", RLRunConfig(flawed_penalty=0.2), "flawed_penalty")
    assert key["flawed_penalty"] == 0.2 and "flawed_penalty" not in key["config"]
    outcome_key = run_key(tmp_path / "policy", tmp_path / "prm", RLRunConfig(flawed_penalty=0.2), "outcome")
    assert outcome_key == run_key(tmp_path / "policy", tmp_path / "prm", RLRunConfig(), "outcome")
    assert ProcessConfig().key() == {"outcome_weight": 0.5}  # existing process arms keep their key
