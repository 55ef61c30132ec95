"""Dense PRM rewards in verl's token-level layout, on the policy's real character tokenizer.

verl does not install here, so the batch is the documented stand-in for a ``DataProto``: ``{"batch": {...},
"non_tensor_batch": {...}}`` with verl's keys and padding (prompts left-padded, responses right-padded), checked
against the layout of ``verl/workers/reward_manager/naive.py`` (v0.4-era, see prm.rewards.adapters.verl_dense).
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import torch

from prm.policy import build_char_tokenizer
from prm.rewards import RewardConfig, Rewarder
from prm.rewards.adapters.verl_dense import PRMDenseRewardManager, dense_rewards
from prm.rewards.constants import PRM_DIR_ENV
from tests.prm.rewards.conftest import KeywordScorer

TOK = build_char_tokenizer()
PROMPT_LEN, RESPONSE_LEN = 6, 24


def _row(text: str, length: int, eos: bool, left: bool) -> tuple[list[int], list[int]]:
    ids = TOK(text, add_special_tokens=False).input_ids + ([TOK.eos_token_id] if eos else [])
    ids = ids[:length]
    pad = [TOK.pad_token_id] * (length - len(ids))
    mask = [1] * len(ids)
    return (pad + ids, [0] * len(pad) + mask) if left else (ids + pad, mask + [0] * len(pad))


def verl_batch(responses: list[str], golds: list[str], *, eos: bool = True, left_responses: bool = False) -> dict:
    """verl's rollout batch for ``responses``: prompts left-padded, responses right-padded (or left)."""
    prompts = [_row("q", PROMPT_LEN, eos=False, left=True) for _ in responses]
    rows = [_row(r, RESPONSE_LEN, eos=eos, left=left_responses) for r in responses]
    return {
        "batch": {
            "prompts": torch.tensor([p for p, _ in prompts]),
            "responses": torch.tensor([r for r, _ in rows]),
            "attention_mask": torch.tensor([pm + rm for (_, pm), (_, rm) in zip(prompts, rows, strict=True)]),
        },
        "non_tensor_batch": {
            "data_source": ["arith"] * len(responses),
            "reward_model": [{"ground_truth": g} for g in golds],
            "extra_info": [{"question": "q"} for _ in responses],
        },
    }


def manager(outcome_weight: float = 0.5, scorer=None, **kwargs) -> PRMDenseRewardManager:
    rewarder = Rewarder(scorer or KeywordScorer(), RewardConfig(outcome_weight=outcome_weight))
    return PRMDenseRewardManager(TOK, num_examine=0, rewarder=rewarder, **kwargs)


TEXT = "ok 1\nbad 2\nAnswer: 3"  # steps end at characters 3 and 9; EOS is token 20


def test_each_step_reward_sits_on_its_last_token_and_the_outcome_on_the_last_valid_one():
    out = manager(step_value="score")(verl_batch([TEXT, TEXT], ["3", "4"]))
    assert out.shape == (2, RESPONSE_LEN) and out.dtype == torch.float32
    expected = torch.zeros(RESPONSE_LEN)
    expected[3], expected[9] = 0.5 * 0.9, 0.5 * 0.1  # (1 - w) * P(good) of "ok 1" and "bad 2"
    right = expected.clone()
    right[20] = 0.5  # w * outcome on valid_response_length - 1
    assert torch.allclose(out[0], right) and torch.allclose(out[1], expected)  # the wrong answer: no outcome


def test_clip_values_never_pay_for_a_good_looking_step():
    out = manager()(verl_batch([TEXT], ["3"]))
    assert out[0, 3] == 0.0 and out[0, 9] == pytest.approx(0.5 * (0.1 - 0.5)) and out[0, 20] == 0.5
    assert torch.count_nonzero(out) == 2


def test_outcome_only_is_the_naive_managers_layout():
    """w = 1: one scalar at valid_response_length - 1 of zeros_like(responses), as NaiveRewardManager does."""
    data = verl_batch([TEXT, "ok 7"], ["3", "7"])
    out = manager(outcome_weight=1.0)(data)
    naive = torch.zeros_like(data["batch"]["responses"], dtype=torch.float32)
    for i in range(2):
        valid = int(data["batch"]["attention_mask"][i, PROMPT_LEN:].sum())
        naive[i, valid - 1] = 1.0 if i == 0 else 0.0  # "ok 7" has no answer line: outcome 0
    assert torch.equal(out, naive)


def test_left_padded_responses_place_at_the_same_tokens():
    right = manager(step_value="score")(verl_batch([TEXT], ["3"]))
    left = manager(step_value="score")(verl_batch([TEXT], ["3"], left_responses=True))
    shift = RESPONSE_LEN - 21  # 21 valid tokens, padding moved to the front
    assert torch.equal(left[0, shift:], right[0, :21]) and torch.all(left[0, :shift] == 0)


def test_a_truncated_response_scores_its_cut_step_on_its_last_token():
    # cut at max_response_length: no EOS, no answer line; the last step is what was generated of it
    # 24 tokens keep "...ok 4\nok " of "...ok 4\nok 55555": the fifth step is "ok", ending at token 22
    out = manager(step_value="score")(verl_batch(["ok 1\nbad 2\nok 3\nok 4\nok 55555"], ["5"], eos=False))
    assert torch.nonzero(out[0]).flatten().tolist() == [3, 9, 14, 19, 22]
    assert out[0, 22] == pytest.approx(0.5 * 0.9) and out[0, -1] == 0.0  # truncated: no outcome reward


@pytest.mark.parametrize("past_end,expected", [("drop", [0.0, 1.0, 0.0, 0.0]), ("clip", [0.0, 1.0, 0.0, 2.0])])
def test_a_step_ending_past_the_response_is_dropped_or_clipped(past_end, expected):
    assert dense_rewards([1, 2, 3, 4], [(0, 2), (2, 7)], [1.0, 2.0], past_end).tolist() == expected


def test_empty_nan_and_unscored_rows_are_defined():
    class NaNScorer:
        def score_batch(self, items, batch_size=None):
            return [[math.nan] * len(steps) for _, steps in items]

    result = manager(scorer=NaNScorer(), step_value="score")(verl_batch([TEXT, ""], ["3", "3"], eos=False),
                                                            return_dict=True)
    assert set(result) == {"reward_tensor", "reward_extra_info"}
    reward = result["reward_tensor"]
    assert torch.count_nonzero(reward[0]) == 1 and reward[0, 19] == 0.5  # NaN steps place nothing; outcome stays
    assert torch.count_nonzero(reward[1]) == 0  # an empty response: nothing to hold a reward
    assert all(len(v) == 2 for v in result["reward_extra_info"].values())  # one value per response for verl


def test_the_manager_needs_a_prm(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv(PRM_DIR_ENV, raising=False)
    with pytest.raises(ValueError, match="prm_dir"):
        PRMDenseRewardManager(TOK)
    with pytest.raises(ValueError, match="step_value"):
        manager(step_value="sum")


def test_with_the_real_tiny_prm(tiny_prm: Path):
    mgr = PRMDenseRewardManager(TOK, 0, None, "data_source", prm_dir=str(tiny_prm), step_value="score",
                                outcome_weight=0.0)
    out = mgr(verl_batch([TEXT], ["3"]))
    assert out.shape == (1, RESPONSE_LEN)
    assert torch.nonzero(out[0]).flatten().tolist() == [3, 9]  # two steps, P(good) > 0 from a real PRM


def test_the_file_loads_as_verls_custom_reward_function():
    """verl imports custom_reward_function.path as "custom_module"; the file brings compute_score and the manager,
    and registers the manager where verl imports (it does not here, so registration reports False)."""
    import importlib.util

    import prm.rewards.adapters.verl_dense as dense

    spec = importlib.util.spec_from_file_location("custom_module", dense.__file__)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert callable(module.compute_score) and module.PRMDenseRewardManager.__name__ == "PRMDenseRewardManager"
    assert module.register_with_verl() is (importlib.util.find_spec("verl") is not None)
