"""A tiny judge fine-tuning run (tiny Llama, shipped policy's samples): the loss falls, the adapter is written in
bf16 with a card whose digest matches its weights, and the held-out table has every key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from safetensors.torch import load_file

from prm.judge_training.config import JudgeTrainConfig
from prm.judge_training.train import train_judge
from prm.models.constants import JUDGE_CARD_FILE
from prm.models.judge import adapter_digest, merge_judge, verify_adapter


def test_a_tiny_run_lowers_the_loss_and_writes_a_checkable_adapter(tiny_models, tmp_path: Path) -> None:
    config = JudgeTrainConfig(base_model=str(tiny_models.lm(1024)), ops=(8,), problems_per_ops=6,
                              eval_problems_per_ops=6, samples_per_problem=4, max_steps=16, batch_size=2,
                              learning_rate=1e-2, warmup_steps=1, max_length=512, torch_threads=1,
                              target_modules=("q_proj", "v_proj"))
    out = train_judge(config, tmp_path / "judge", progress=lambda _: None)
    card = json.loads((out / JUDGE_CARD_FILE).read_text())
    losses = [c["loss"] for c in card["curve"]]
    assert len(losses) == 16 and sum(losses[-4:]) / 4 < sum(losses[:4]) / 4
    assert card["digest"] == adapter_digest(out) and card["config"]["max_steps"] == 16
    assert {str(t.dtype) for t in load_file(str(out / "adapter_model.safetensors")).values()} == {"torch.bfloat16"}
    assert set(card["eval"]) >= {"coverage", "first_error_acc", "correct_acc", "processbench_f1", "tokens_per_step"}
    assert card["train_solutions"] > 0 and card["eval_solutions"] > 0
    merged = merge_judge(out, tiny_models.lm(1024), tmp_path / "merged")
    assert (merged / "config.json").is_file() and (merged / JUDGE_CARD_FILE).is_file()
    assert merge_judge(out, tiny_models.lm(1024), tmp_path / "merged") == merged  # built once per adapter digest
    weights = out / "adapter_model.safetensors"
    data = weights.read_bytes()
    weights.write_bytes(data[:-1] + bytes([data[-1] ^ 0xFF]))  # one byte altered
    with pytest.raises(ValueError, match="does not match the digest in its card"):
        verify_adapter(out)
