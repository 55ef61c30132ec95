"""prm.models: name resolution, GGUF conversion, prompt formatting."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from prm.format import format_prompt
from prm.models import load_tokenizer, prompter_for, resolve_model
from prm.models.constants import SHIPPED_POLICY_DIR
from warehouse.locks import exclusive


class _Plain:
    chat_template = None


@pytest.mark.parametrize(
    "name",
    ["HuggingFaceTB/SmolLM2-135M-Instruct", "Qwen/Qwen2.5-Math-1.5B-Instruct"],
)
def test_hub_ids_pass_through(name: str) -> None:
    assert resolve_model(name) == name


@pytest.mark.parametrize("name", ["/no/such/model", "./missing-folder", "not-a-registered-name"])
def test_missing_model_is_a_clear_error(name: str) -> None:
    with pytest.raises(FileNotFoundError, match="neither a registered name"):
        resolve_model(name)


def test_folder_without_config_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"no config\.json"):
        resolve_model(tmp_path)


def test_local_folder_resolves_to_path(tiny_policy_dir: Path) -> None:
    assert resolve_model(str(tiny_policy_dir)) == tiny_policy_dir.resolve()


def test_smollm2_converts_once_with_chat_template() -> None:
    folder = resolve_model("smollm2-135m-instruct")
    assert isinstance(folder, Path)
    assert (folder / "model.safetensors").is_file()
    assert resolve_model("smollm2-135m-instruct") == folder  # cached: no second conversion
    prompt = format_prompt(load_tokenizer("smollm2-135m-instruct"), "What is 2+3?")
    assert prompt.endswith("<|im_start|>user\nWhat is 2+3?<|im_end|>\n<|im_start|>assistant\n")


def test_format_prompt_without_chat_template() -> None:
    assert format_prompt(_Plain(), "Evaluate 3-7.") == "Evaluate 3-7.\n"


def test_format_prompt_accepts_model_path(tiny_policy_dir: Path) -> None:
    assert prompter_for(str(tiny_policy_dir))("1+1") == "1+1\n"


def test_file_lock_is_exclusive(tmp_path: Path) -> None:
    lock = tmp_path / "m.lock"
    with exclusive(lock), pytest.raises(TimeoutError, match="another process"), exclusive(lock, timeout_s=0.2):
        pass


def test_arith_policy_resolves_to_a_local_build_else_the_shipped_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PRM_MODEL_CACHE", str(tmp_path))
    assert resolve_model("arith-policy") == SHIPPED_POLICY_DIR
    shutil.copytree(SHIPPED_POLICY_DIR, tmp_path / "arith-policy")
    assert resolve_model("arith-policy") == tmp_path / "arith-policy"


def test_resolving_the_policy_never_trains(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A missing checkpoint is a clear error, not 25 minutes of training."""
    import prm.models.registry as registry

    monkeypatch.setenv("PRM_MODEL_CACHE", str(tmp_path))
    monkeypatch.setattr(registry, "SHIPPED_POLICY_DIR", tmp_path / "nowhere")
    with pytest.raises(FileNotFoundError, match="make policy"):
        resolve_model("arith-policy")
    assert not (tmp_path / "arith-policy").exists()


def test_model_version_changes_with_the_weights(tmp_path) -> None:
    from prm.models import model_version

    folder = tmp_path / "policy"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "llama"}')
    (folder / "model.safetensors").write_bytes(b"\x00" * 4096)
    first = model_version(str(folder))
    assert first.startswith(f"{folder}@") and model_version(str(folder)) == first
    (folder / "model.safetensors").write_bytes(b"\x00" * 4095 + b"\x01")  # retrained: same size, new tail
    assert model_version(str(folder)) != first
    assert model_version("org/hub-model") == "org/hub-model"
