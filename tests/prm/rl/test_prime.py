"""PRIME on the tiny models: the online implicit PRM learns from outcomes (wrong completions score lower after an
update, and a fixed seed repeats), PRIME's advantages on a hand-built batch, and both prime arms through run_grpo."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch

from prm.format import format_prompt
from prm.rl.config import ARMS, PRIME_ARMS
from prm.rl.constants import PRIME, PRIME_PLAIN
from prm.rl.grpo import load_result, run_grpo, run_key
from prm.rl.prime import PrimeConfig, load_online_prm, prime_advantages
from tests.prm.rl.conftest import TINY_RUN

WRONG = ["1 + 2 = 4\nThe answer is 4", "3 + 4 = 8\nThe answer is 8", "5 - 1 = 6\nThe answer is 6"]


def _rollouts(tokenizer, outcome: float) -> list[tuple[list[int], list[int], float]]:
    questions = ["What is 1 plus 2?", "What is 3 plus 4?", "What is 5 minus 1?"]
    out = []
    for question, text in zip(questions, WRONG, strict=True):
        prompt = tokenizer(format_prompt(tokenizer, question))["input_ids"]
        completion = tokenizer(text, add_special_tokens=False)["input_ids"] + [tokenizer.eos_token_id]
        out.append((prompt, completion, outcome))
    return out


def _tokenizer(folder: Path):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(folder))


@pytest.mark.parametrize("start", ["policy", "prm"])
def test_an_update_on_wrong_completions_scores_them_lower(start: str, tiny_lm: Path, tiny_lm_prm: Path):
    tokenizer = _tokenizer(tiny_lm)
    config = PrimeConfig(start=start, beta=0.5, learning_rate=1e-2)
    online = load_online_prm(tiny_lm, tiny_lm_prm, config, tokenizer)
    wrong = _rollouts(tokenizer, 0.0)
    before = online.sequence_scores(wrong)
    if start == "policy":  # the policy against itself: every token reward starts at exactly 0
        assert before == [0.5] * len(wrong)
    reference = [p.detach().clone() for p in online.ref.parameters()]
    losses = [online.update(wrong)[0] for _ in range(3)]
    after = online.sequence_scores(wrong)
    assert all(a < b for a, b in zip(after, before, strict=True)), (before, after)
    assert losses[-1] < losses[0]  # the online loss (read before each update) falls
    assert all(torch.equal(a, b) for a, b in zip(reference, online.ref.parameters(), strict=True))  # ref frozen


def test_a_fixed_seed_repeats(tiny_lm: Path, tiny_lm_prm: Path, tmp_path: Path):
    tokenizer = _tokenizer(tiny_lm)
    replay = tmp_path / "rows.jsonl"  # step-labelled rows replayed into each update, drawn by the seed
    replay.write_text("\n".join(json.dumps({"prompt": f"{i} plus 1", "completions": [f"{i} + 1 = {i + 1}", "no"],
                                            "labels": [True, False]}) for i in range(6)))
    config = PrimeConfig(start="prm", learning_rate=1e-2, replay_file=str(replay), replay_share=0.5, seed=3)
    runs = []
    for _ in range(2):
        online = load_online_prm(tiny_lm, tiny_lm_prm, config, tokenizer)
        mixed = _rollouts(tokenizer, 0.0)[:2] + _rollouts(tokenizer, 1.0)[2:]
        loss, _ = online.update(mixed)
        runs.append((loss, online.token_rewards(mixed)))
    assert runs[0] == runs[1]


def test_prime_needs_an_lm_head_prm(tiny_lm: Path, tiny_prm: Path):
    with pytest.raises(ValueError, match="run the prime_plain arm"):
        load_online_prm(tiny_lm, tiny_prm, PrimeConfig(start="prm"), _tokenizer(tiny_lm))


def test_prime_advantages_on_a_hand_built_batch():
    # one group of two: completion 0 right with token rewards (1, 0), completion 1 wrong with (0, 0, -1)
    adv = prime_advantages([[1.0, 0.0], [0.0, 0.0, -1.0]], [1.0, 0.0], 2, 4, outcome_coef=0.0)
    # process: minus the other's mean token reward (-1/3 for 0, 1/2 for 1), summed from each token on
    returns = torch.tensor([[1 + 1 / 3 + 1 / 3, 1 / 3, 0, 0], [-0.5 - 0.5 - 1.5, -0.5 - 1.5, -1.5, 0]])
    mask = torch.tensor([[1, 1, 0, 0], [1, 1, 1, 0]], dtype=torch.float32)
    mean = (returns * mask).sum() / mask.sum()
    std = math.sqrt((((returns - mean) * mask) ** 2).sum() / mask.sum())
    assert torch.allclose(adv, (returns - mean) / std * mask, atol=1e-5)
    outcome = prime_advantages([[0.0, 0.0], [0.0, 0.0, 0.0]], [1.0, 0.0], 2, 4, process_coef=0.0)
    assert float((outcome * mask).sum()) == pytest.approx(0.0, abs=1e-5)  # normalised over the batch's tokens
    assert float(outcome[0, 0]) > 0 > float(outcome[1, 0]) and float(outcome[1, 3]) == 0.0


def test_prime_arms_are_arms_with_the_shared_budget():
    assert {PRIME, PRIME_PLAIN} <= set(ARMS) and {PRIME, PRIME_PLAIN} <= set(PRIME_ARMS)
    assert PRIME_ARMS[PRIME].start == "prm" and PRIME_ARMS[PRIME_PLAIN].start == "policy"
    assert ARMS[PRIME].outcome_weight == 1.0  # the reward function is the verifier; the PRM enters per token


def test_prime_arm_trains_through_run_grpo_and_logs_the_online_prm(tiny_lm: Path, tiny_lm_prm: Path, tmp_path: Path):
    result = run_grpo(tiny_lm, tiny_lm_prm, PRIME, TINY_RUN, tmp_path)
    assert result.steps == 2 and [p.step for p in result.curve] == [1, 2]
    assert all(p.prm_loss is not None and p.prm_loss > 0 for p in result.curve)
    assert [p.step for p in result.heldout_points] == [0, 2]
    assert load_result(tmp_path, run_key(tiny_lm, tiny_lm_prm, TINY_RUN, PRIME)) == result
    assert load_result(tmp_path, run_key(tiny_lm, tiny_lm_prm, TINY_RUN, PRIME_PLAIN)) is None  # its own key


def test_prime_plain_runs_beside_a_classification_prm(tiny_lm: Path, tiny_prm: Path, tmp_path: Path):
    result = run_grpo(tiny_lm, tiny_prm, PRIME_PLAIN, TINY_RUN, tmp_path)
    assert result.steps == 2 and all(p.prm_loss is not None for p in result.curve)
