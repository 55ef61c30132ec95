"""The judge's and the registry's tamper checks cover every file that changes the model, whole (issue 38, item 6):
the adapter digest covers ``adapter_config.json``, the merged judge in the model cache is verified on load (not
trusted on its completion marker), and ``weights_digest`` reads every byte of a weight file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from prm.models import weights_digest
from prm.models.constants import COMPLETE_MARKER, JUDGE_CARD_FILE, SHIPPED_JUDGE_DIR
from prm.models.judge import adapter_digest, merge_judge, merged_problem, verify_adapter
from tests.tiny_models import save_tiny_lm


def test_an_adapter_config_change_fails_verification(tmp_path: Path) -> None:
    copy = Path(shutil.copytree(SHIPPED_JUDGE_DIR, tmp_path / "judge"))
    assert verify_adapter(copy)  # the shipped card's digest covers the shipped config
    config = json.loads((copy / "adapter_config.json").read_text())
    assert config["lora_alpha"] == 32
    config["lora_alpha"] = 3200  # the same weights, a 100x larger update: another judge
    (copy / "adapter_config.json").write_text(json.dumps(config, indent=2))
    with pytest.raises(ValueError, match="does not match the digest in its card"):
        verify_adapter(copy)


def test_weights_digest_reads_the_middle_of_a_weight_file(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "llama"}))
    weights = tmp_path / "model.safetensors"
    data = bytearray(b"\x01" * (5 << 20))  # 5 MiB: the middle MiB is more than a MiB from either end
    weights.write_bytes(bytes(data))
    before = weights_digest(tmp_path)
    data[len(data) // 2] ^= 0xFF
    weights.write_bytes(bytes(data))
    assert weights_digest(tmp_path) != before


def test_weights_digest_covers_an_lm_head_prms_recipe(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "llama"}))
    (tmp_path / "model.safetensors").write_bytes(b"\x00" * 64)
    (tmp_path / "implicit_prm.json").write_text(json.dumps({"beta": 0.5}))
    before = weights_digest(tmp_path)
    (tmp_path / "implicit_prm.json").write_text(json.dumps({"beta": 5.0}))
    assert weights_digest(tmp_path) != before


@pytest.fixture(scope="module")
def tiny_adapter(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A tiny causal LM and a LoRA adapter over it with a judge card recording its digest."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    root = tmp_path_factory.mktemp("judge")
    base = save_tiny_lm(root / "base", 64)
    torch.manual_seed(0)
    model = get_peft_model(AutoModelForCausalLM.from_pretrained(str(base)),
                           LoraConfig(r=2, lora_alpha=4, target_modules=["q_proj", "v_proj"], init_lora_weights=False))
    adapter = root / "adapter"
    model.save_pretrained(str(adapter))
    (adapter / JUDGE_CARD_FILE).write_text(json.dumps({"digest": adapter_digest(adapter)}))
    return base, adapter


def test_a_merged_judge_emptied_in_the_cache_is_rebuilt_not_served(tiny_adapter: tuple[Path, Path],
                                                                    tmp_path: Path) -> None:
    from transformers import AutoModelForCausalLM

    base, adapter = tiny_adapter
    out = merge_judge(adapter, base, tmp_path / "merged")
    digest = verify_adapter(adapter)
    assert merged_problem(out, digest) is None
    weights = out / "model.safetensors"
    size = weights.stat().st_size
    weights.write_bytes(b"")  # emptied, its completion marker untouched
    assert (out / COMPLETE_MARKER).is_file()
    assert "0 bytes" in merged_problem(out, digest)
    assert merge_judge(adapter, base, out) == out
    assert weights.stat().st_size == size and merged_problem(out, digest) is None
    AutoModelForCausalLM.from_pretrained(str(out))  # loads: the rebuilt weights are whole


def test_a_merged_judge_altered_in_place_is_rebuilt(tiny_adapter: tuple[Path, Path], tmp_path: Path) -> None:
    base, adapter = tiny_adapter
    out = merge_judge(adapter, base, tmp_path / "merged")
    weights = out / "model.safetensors"
    data = bytearray(weights.read_bytes())
    original = bytes(data)
    data[-1] ^= 0xFF  # same size, one byte of the last tensor
    weights.write_bytes(bytes(data))
    assert "altered" in merged_problem(out, verify_adapter(adapter))
    merge_judge(adapter, base, out)
    assert weights.read_bytes() == original


def test_a_marker_from_an_older_build_is_not_trusted(tiny_adapter: tuple[Path, Path], tmp_path: Path) -> None:
    base, adapter = tiny_adapter
    out = merge_judge(adapter, base, tmp_path / "merged")
    digest = verify_adapter(adapter)
    (out / COMPLETE_MARKER).write_text(digest + "\n")  # the marker merge_judge wrote before it listed files
    assert "older build" in merged_problem(out, digest)
    merge_judge(adapter, base, out)
    assert merged_problem(out, digest) is None
