"""DeepSeekMath's process advantages on hand-computed groups, and step spans mapped to the generated tokens
with real tokenizers (the policy's character tokenizer and SmolLM2's BPE)."""

from __future__ import annotations

import math

import pytest
import torch

from prm.format import segment
from prm.policy import build_char_tokenizer
from prm.rewards.token_spans import step_end_tokens, token_char_ends
from prm.rl.process_advantages import (
    normalise_group,
    step_scores,
    token_advantages,
)
from prm.rl.process_grpo import process_advantage_matrix

NAN = math.nan


@pytest.mark.parametrize("scores,expected", [
    # mean 0.5, population std 0.5 over the group's four steps
    ([[1.0, 0.0], [1.0, 0.0]], [[1.0, -1.0], [1.0, -1.0]]),
    # three steps 0.2, 0.8, 0.5: mean 0.5, std sqrt(0.06)
    ([[0.2, 0.8], [0.5]], [[-0.3 / math.sqrt(0.06), 0.3 / math.sqrt(0.06)], [0.0]]),
    ([[0.7, 0.7], [0.7]], [[0.0, 0.0], [0.0]]),  # ties: std 0, every step 0
    ([[0.9], []], [[0.0], []]),  # a single step in the group: std 0
    ([[], []], [[], []]),  # no step anywhere
    ([[1.0, NAN], [0.0]], [[1.0, 0.0], [-1.0]]),  # NaN left out of mean/std, normalised to 0
    ([[NAN], [NAN]], [[0.0], [0.0]]),
])
def test_group_normalisation(scores, expected):
    got = normalise_group(scores)
    assert [len(r) for r in got] == [len(r) for r in expected]
    for row, want in zip(got, expected, strict=True):
        assert row == pytest.approx(want)


def test_a_token_sums_the_steps_ending_at_or_after_it():
    # steps end at tokens 2, 5 and 5 (two steps in one token), 8 tokens: 6 and 7 follow the last step
    assert token_advantages([0.5, -1.0, 2.0], [2, 5, 5], 8) == [1.5, 1.5, 1.5, 1.0, 1.0, 1.0, 0.0, 0.0]


@pytest.mark.parametrize("rewards,ends,length,expected", [
    ([1.0], [0], 1, [1.0]),  # a single step, a single token
    ([], [], 4, [0.0] * 4),  # an empty completion: no process advantage
    ([1.0, 2.0], [None, 1], 3, [2.0, 2.0, 0.0]),  # a step with no token (past the text) counts for nothing
    ([1.0], [7], 3, [0.0] * 3),  # an end past the row (truncated) is dropped
    ([], [], 0, []),
])
def test_token_advantage_edges(rewards, ends, length, expected):
    assert token_advantages(rewards, ends, length) == expected


def test_missing_scores_are_nan_and_move_nothing():
    assert [s if not math.isnan(s) else "nan" for s in step_scores([0.9], 3)] == [0.9, "nan", "nan"]
    matrix = process_advantage_matrix([[0.9, NAN], [0.1]], [[1, 3], [0]], [4, 2], num_generations=2, width=4)
    # finite steps 0.9 and 0.1: mean 0.5, std 0.4 -> +1 and -1; the NaN step adds 0
    assert matrix.tolist() == [[1.0, 1.0, 0.0, 0.0], [-1.0, 0.0, 0.0, 0.0]]


def test_groups_are_normalised_apart():
    matrix = process_advantage_matrix([[1.0], [0.0], [5.0], [5.0]], [[0], [0], [0], [0]], [1, 1, 1, 1], 2, 2)
    assert matrix.tolist() == [[1.0, 0.0], [-1.0, 0.0], [0.0, 0.0], [0.0, 0.0]]
    with pytest.raises(ValueError, match="groups of 2"):
        process_advantage_matrix([[1.0]] * 3, [[0]] * 3, [1] * 3, 2, 1)


def _spans_to_tokens(tok, text: str) -> tuple[list[int], list[int | None], list[str]]:
    ids = [*tok(text, add_special_tokens=False).input_ids, tok.eos_token_id]
    seg = segment(text)
    ends = step_end_tokens(token_char_ends(tok, ids), list(seg.spans))
    return ids, ends, list(seg.steps)


def test_char_tokenizer_maps_each_step_to_its_last_character():
    tok = build_char_tokenizer()
    text = "4+5 = 9\n9-2 = 7\nAnswer: 7"
    ids, ends, steps = _spans_to_tokens(tok, text)
    assert steps == ["4+5 = 9", "9-2 = 7"]
    assert ends == [6, 14]  # one token per character: the '9' at 6 and the '7' at 14
    assert [tok.decode(ids[: e + 1]) for e in ends] == ["4+5 = 9", "4+5 = 9\n9-2 = 7"]
    adv = token_advantages([1.0, -1.0], ends, len(ids))
    assert adv[:7] == [0.0] * 7 and adv[7:15] == [-1.0] * 8 and adv[15:] == [0.0] * (len(ids) - 15)


def test_smollm2_bpe_maps_each_step_to_the_token_holding_its_end():
    from transformers import AutoTokenizer

    from prm.models import resolve_model

    try:
        tok = AutoTokenizer.from_pretrained(str(resolve_model("smollm2-135m-instruct")))
    except Exception as err:  # the converted folder is built by the model tests; not worth building here
        pytest.skip(f"SmolLM2's tokenizer is not available here: {err}")
    text = "We add 12 and 30 to get 42.\nThen 42 × 2 = 84 (doubling).\nAnswer: 84"
    ids, ends, _ = _spans_to_tokens(tok, text)
    assert len(ends) == 2 and all(e is not None for e in ends)
    for (_, end), e in zip(segment(text).spans, ends, strict=True):
        before = tok.decode(ids[:e], skip_special_tokens=True)
        through = tok.decode(ids[: e + 1], skip_special_tokens=True)
        assert len(before) < end <= len(through)  # token e holds the step's last character
    assert ends[1] < len(ids) - 1  # the answer line and EOS come after the last step


def test_char_ends_are_monotone_and_end_at_the_text():
    tok = build_char_tokenizer()
    ids = [tok.bos_token_id, *tok("1+2 = 3", add_special_tokens=False).input_ids, tok.eos_token_id, tok.pad_token_id]
    ends = token_char_ends(tok, ids)
    assert ends == sorted(ends) and ends[0] == 0 and ends[-1] == len("1+2 = 3")
    assert token_char_ends(tok, []) == []
    assert isinstance(process_advantage_matrix([[]], [[]], [0], 1, 0), torch.Tensor)
