"""The TRL internals prm.rl.process_grpo overrides, asserted at the pinned version: when TRL changes any of
them, this fails and names what moved, instead of the process arm training on wrong advantages."""

from __future__ import annotations

import inspect

import torch
import trl
from trl import GRPOTrainer
from trl.trainer.utils import shuffle_sequence_dict, split_tensor_dict

from prm.rl.constants import PROCESS_TRL_VERSION


def test_trl_is_the_pinned_release():
    assert trl.__version__ == PROCESS_TRL_VERSION, (
        f"TRL {trl.__version__} is installed; prm.rl.process_grpo was written against {PROCESS_TRL_VERSION}. "
        "Re-read GRPOTrainer._generate_and_score_completions and _compute_loss, then update the pin")


def test_generate_and_score_completions_returns_the_keys_the_override_reads():
    method = GRPOTrainer._generate_and_score_completions
    assert list(inspect.signature(method).parameters) == ["self", "inputs"]
    source = inspect.getsource(method)
    for key in ('"completion_ids": completion_ids', '"completion_mask": completion_mask',
                '"advantages": advantages'):
        assert key in source, f"TRL's _generate_and_score_completions no longer returns {key}"
    assert "advantages = advantages[process_slice]" in source  # rows are this process's, in order
    assert "self._calculate_rewards(inputs, prompts, completions, completion_ids_list)" in source


def test_the_loss_uses_two_dimensional_advantages_per_token():
    source = inspect.getsource(GRPOTrainer._compute_loss)
    assert 'advantages = inputs["advantages"]' in source
    assert "if advantages.dim() == 1:\n            advantages = advantages.unsqueeze(1)" in source
    assert list(inspect.signature(GRPOTrainer._compute_loss).parameters) == ["self", "model", "inputs"]


def test_completions_are_decoded_skipping_special_tokens():
    """The spans the reward saw index this text; the override decodes the ids the same way."""
    source = inspect.getsource(GRPOTrainer._generate)
    assert "batch_decode(completion_ids, skip_special_tokens=True)" in source


def test_the_buffer_splits_and_shuffles_per_token_advantages_by_row():
    source = inspect.getsource(GRPOTrainer._prepare_inputs)
    assert "self._generate_and_score_completions(generation_batch)" in source
    batch = {"advantages": torch.arange(12.0).view(4, 3), "completion_ids": torch.arange(12).view(4, 3)}
    shuffled = shuffle_sequence_dict(batch)
    assert torch.equal(shuffled["advantages"].long(), shuffled["completion_ids"])  # rows move together
    halves = split_tensor_dict(shuffled, 2)
    assert [h["advantages"].shape for h in halves] == [torch.Size([2, 3])] * 2
