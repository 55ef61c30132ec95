"""A PRM whose weights came out NaN or infinite is never written: the check after training (and before each
checkpoint) refuses it in one line that names the settings to lower, and the CLI exits 1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from transformers import AutoModelForCausalLM

import prm.training.lm_head as lm_head
import prm.training.trainer as trainer
from prm.training import train_prm
from prm.training.__main__ import main
from prm.training.finite import check_finite_weights
from tests.prm.training.test_trainer import learnable_rows, tiny

DIVERGED = r"training made [0-9,]+ of [0-9,]+ weights NaN or infinite .* lower learning_rate \(now "


def _poison(model: torch.nn.Module) -> torch.nn.Module:
    """What a diverged optimizer leaves: a NaN weight (its loss and gradients, then every weight, follow)."""
    with torch.no_grad():
        next(model.parameters()).fill_(float("nan"))
    return model


def _written(out: Path) -> list[str]:
    """Every file under ``out`` (none when it was never made)."""
    return sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()) if out.exists() else []


def test_the_check_refuses_a_model_with_a_nan_weight_and_passes_a_finite_one(tiny_base: Path) -> None:
    model = AutoModelForCausalLM.from_pretrained(str(tiny_base))
    check_finite_weights(model, "prm", {"learning_rate": 0.01})
    with pytest.raises(ValueError, match=DIVERGED + r"0\.01\)"):
        check_finite_weights(_poison(model), "prm", {"learning_rate": 0.01})


def test_a_diverged_classifier_run_writes_no_checkpoint_and_no_folder(tiny_base: Path, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    load = trainer.load_backbone
    monkeypatch.setattr(trainer, "load_backbone", lambda config: (_poison(load(config)[0]), load(config)[1]))
    out = tmp_path / "prm"
    with pytest.raises(ValueError, match=DIVERGED):
        train_prm(learnable_rows(8, "train", 0), out, tiny(tiny_base, max_steps=2, save_steps=1))
    assert _written(out) == []  # not even checkpoint-1: the check runs before the Trainer saves it


def test_a_diverged_lm_head_run_exits_1_in_one_line_and_writes_nothing(tiny_base: Path, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch,
                                                                      capsys: pytest.CaptureFixture) -> None:
    fit = lm_head.fit_implicit

    def diverged(*args, **kwargs):
        fitted = fit(*args, **kwargs)
        _poison(fitted.model)
        return fitted

    monkeypatch.setattr(lm_head, "fit_implicit", diverged)
    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps(r) + "\n" for r in learnable_rows(8, "train", 0)))
    out = tmp_path / "prm"
    code = main(["train", "--data", str(rows), "--out", str(out), "--base-model", str(tiny_base), "--head", "lm",
                 "--ref-floor", "none", "--max-steps", "1", "--batch-size", "8", "--warmup-steps", "0"])
    err = capsys.readouterr().err  # logging and HF's progress bars, then the one error line
    last = err.strip().splitlines()[-1]
    assert code == 1 and "Traceback" not in err and err.count("Error:") == 1
    assert last.startswith("Error: training made") and "lower learning_rate (now 0.0005) or weight_decay" in last
    assert _written(out) == []


@pytest.mark.parametrize("flag,value", [
    ("--learning-rate", "1e10"), ("--learning-rate", "nan"), ("--learning-rate", "-1"),
    ("--weight-decay", "1e30"), ("--weight-decay", "inf"), ("--weight-decay", "nan"), ("--max-steps", "10000000000"),
])
@pytest.mark.parametrize("head", ["lm", "classifier"])
def test_the_cli_refuses_a_setting_that_cannot_train_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture,
                                                                 flag: str, value: str, head: str) -> None:
    rows = tmp_path / "rows.jsonl"
    rows.write_text("".join(json.dumps(r) + "\n" for r in learnable_rows(4, "train", 0)))
    out = tmp_path / "prm"
    assert main(["train", "--data", str(rows), "--out", str(out), "--head", head, flag, value]) == 1
    err = capsys.readouterr().err
    name = flag[2:].replace("-", "_")
    assert err.startswith(f"Error: {name}=") and err.count("\n") == 1 and not out.exists()
