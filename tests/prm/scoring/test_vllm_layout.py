"""Which PRM folders vLLM's pooling runner can load and with which arguments, decided before any engine starts;
and the errors a caller gets without vLLM or with a folder vLLM cannot load (no engine here)."""

from __future__ import annotations

import sys

import pytest

from prm.format import CONVENTIONS
from prm.scoring import ScorerConfig, load_prm
from prm.scoring.vllm_layout import VLLMLayout, VLLMLayoutError, vllm_engine_kwargs, vllm_layout
from tests.tiny_models import build_prm, char_tokenizer

CONFIG = ScorerConfig(device="cpu", torch_threads=1)


@pytest.mark.parametrize("convention,architecture,convert", [
    ("prm-pipeline", "LlamaForTokenClassification", "classify"),  # this project's PRMs, saved as they are
    ("prm-pipeline", "Qwen2ForTokenClassification", "classify"),  # any backbone's token-classification head
    ("qwen2.5-math-prm", "Qwen2ForProcessRewardModel", "auto"),  # vLLM's native Qwen2.5-Math-PRM
])
def test_token_classification_folders_load_without_overrides(convention, architecture, convert):
    layout = vllm_layout("m", CONVENTIONS[convention], {"architectures": [architecture]}, None)
    assert layout == VLLMLayout(architecture, convert)


def test_math_shepherd_reads_the_marks_through_a_head_built_from_the_lm_head():
    tok = char_tokenizer(bos=True, added=["ки"])
    layout = vllm_layout("m", CONVENTIONS["math-shepherd"], {"architectures": ["MistralForCausalLM"]}, tok)
    assert layout.convert == "classify"
    # [bad, good]: column 1 of vLLM's softmax is P(good), as for the token-classification heads.
    assert layout.hf_overrides == {"classifier_from_token": ["-", "+"], "method": "no_post_processing"}


@pytest.mark.parametrize("convention,config,match", [
    ("prm-pipeline", {"architectures": ["LlamaForCausalLM"]},
     r"architecture 'LlamaForCausalLM' has no token-classification head vLLM can load .*transformers engine"),
    ("prm-pipeline", {}, r"no 'architectures' entry, so vLLM cannot tell which model to build"),
    ("math-shepherd", {"architectures": ["LlamaForTokenClassification"]},
     r"'LlamaForTokenClassification' is not a causal LM, but the 'math-shepherd' convention reads next-token logits"),
])
def test_a_folder_vllm_cannot_load_is_refused_with_what_to_do(convention, config, match):
    with pytest.raises(VLLMLayoutError, match=match):
        vllm_layout("m", CONVENTIONS[convention], config, char_tokenizer(bos=True, added=["ки"]))


def test_engine_arguments_follow_the_device():
    layout = VLLMLayout("LlamaForTokenClassification", "classify")
    cpu = vllm_engine_kwargs("m", layout, CONFIG, dtype="float32", max_model_len=512, on_cpu=True)
    cuda = vllm_engine_kwargs("m", layout, ScorerConfig(gpu_memory_utilization=0.4), dtype="bfloat16",
                              max_model_len=512, on_cpu=False)
    assert (cpu["runner"], cpu["convert"], cpu["enable_prefix_caching"]) == ("pooling", "classify", False)
    assert (cpu["enforce_eager"], cpu["block_size"], cpu["kv_cache_memory_bytes"]) == (True, 32, 2 << 30)
    assert (cuda["enforce_eager"], cuda["gpu_memory_utilization"], cuda["dtype"]) == (False, 0.4, "bfloat16")
    assert "block_size" not in cuda and "kv_cache_memory_bytes" not in cuda


def test_engine_vllm_without_vllm_says_how_to_install_it(prm_folders, monkeypatch):
    monkeypatch.setitem(sys.modules, "vllm", None)  # what `import vllm` sees where the package is absent
    with pytest.raises(ImportError, match=r"engine='vllm' needs the vllm package.*make venv.*engine='transformers'"):
        load_prm(prm_folders["prm-pipeline"], CONFIG, engine="vllm")


def test_the_reward_server_without_vllm_refuses_in_one_line(prm_folders, monkeypatch):
    from click.testing import CliRunner

    from prm.reward_server.cli import main

    monkeypatch.setitem(sys.modules, "vllm", None)
    result = CliRunner().invoke(main, ["serve", "--model", str(prm_folders["prm-pipeline"]), "--engine", "vllm"])
    assert result.exit_code == 1
    assert result.output.startswith("Error: --engine vllm needs the vllm package") and "--engine transformers" in \
        result.output


def test_an_unloadable_folder_fails_before_an_engine_starts(tmp_path):
    folder = build_prm("causal-as-token-classification", tmp_path / "lm")
    with pytest.raises(VLLMLayoutError, match="LlamaForCausalLM"):
        load_prm(folder, CONFIG, engine="vllm")


def test_an_unknown_engine_is_refused():
    with pytest.raises(ValueError, match="engine='tgi' must be one of"):
        load_prm("/nonexistent", engine="tgi")
