"""How vLLM's pooling runner loads each PRM layout, decided from the folder's config.json before any engine starts.

What vLLM 0.32 loads (read in its source, then measured with :mod:`prm.scoring.vllm_scorer`'s parity test):

* **This project's PRMs** are ``LlamaForTokenClassification`` (any backbone's ``*ForTokenClassification``, as
  ``AutoModelForTokenClassification`` saves it). That name is not in vLLM's registry, but its suffix resolves
  to ``--convert classify`` (``vllm/config/model.py``, ``_SUFFIX_TO_DEFAULTS``), which wraps the backbone's
  ``*ForCausalLM`` in ``as_seq_cls_model`` (``vllm/model_executor/models/adapters.py``): a linear ``score``
  head of ``num_labels`` outputs whose bias is loaded when the checkpoint has one (HF's head has), under a
  pooler that also serves ``token_classify`` (softmax over the two labels at every token). So the saved folder
  loads as it is; no new layout was needed. Measured: the probabilities equal transformers' to 3e-7 in fp32.
* **Qwen2.5-Math-PRM** (``Qwen2ForProcessRewardModel``) is native (``models/qwen2_rm.py``: Qwen2 and a
  Linear-ReLU-Linear head of 2 labels). vLLM runs its own implementation, so the folder's head code never runs.
* **Math-Shepherd** is a causal LM read through the "+"/"-" logits. ``--convert classify`` with
  ``hf_overrides={"classifier_from_token": [bad, good], "method": "no_post_processing"}`` builds a 2-label
  head from the LM head's rows of the two tokens (``load_weights_no_post_processing``), so ``token_classify``'s
  softmax over [bad, good] is the card's softmax over the two logits.

The pooler is ``ALL`` (every token's probabilities) and scores are read at the tag positions the layout
computed (:mod:`prm.scoring.layouts`), as the transformers engine reads them. vLLM's ``STEP`` pooler
(``step_tag_id``) is not used: this project's tag ``"\\n"`` also ends the prompt, so STEP would return rows
that are no step; and its ``returned_token_ids`` slices a converted model's hidden states, not vocabulary
logits, so it cannot read Math-Shepherd's "+"/"-" either.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prm.format import StepTagConvention
from prm.generation import device_engine_kwargs
from prm.scoring.base import candidate_ids
from prm.scoring.config import ScorerConfig
from prm.scoring.kinds import prm_kind

# PRM architectures vLLM implements itself (vllm/model_executor/models/registry.py), with a 2-label head.
NATIVE_PRM_ARCHITECTURES = ("Qwen2ForProcessRewardModel",)
# vLLM's pooling task and pooler for step scores: probabilities of every token, read at the tags here.
POOLING_TASK = "token_classify"
POOLER = {"task": POOLING_TASK, "pooling_type": "ALL"}
_TRANSFORMERS_FIX = "score it with the transformers engine instead (load_prm(folder), prm-reward serve --engine " \
                    "transformers)"


class VLLMLayoutError(ValueError):
    """The folder's model is not one vLLM's pooling runner can load as a PRM."""


@dataclass(frozen=True)
class VLLMLayout:
    """How vLLM loads one PRM folder: its ``--convert`` choice and the config overrides it needs."""

    architecture: str
    convert: str  # "auto" for a native PRM, "classify" to wrap a *ForCausalLM backbone in a classification head
    hf_overrides: dict[str, Any] = field(default_factory=dict)


def vllm_layout(folder: str | Path, convention: StepTagConvention, model_config: dict[str, Any],
                tokenizer: Any) -> VLLMLayout:
    """The :class:`VLLMLayout` of a PRM folder, or a :class:`VLLMLayoutError` saying why vLLM cannot load it and
    what to do.

    >>> from prm.format import CONVENTIONS
    >>> vllm_layout("m", CONVENTIONS["prm-pipeline"], {"architectures": ["LlamaForTokenClassification"]}, None)
    VLLMLayout(architecture='LlamaForTokenClassification', convert='classify', hf_overrides={})
    >>> vllm_layout("m", CONVENTIONS["prm-pipeline"], {"architectures": ["LlamaForCausalLM"]}, None)
    Traceback (most recent call last):
    ...
    prm.scoring.vllm_layout.VLLMLayoutError: m/config.json: architecture 'LlamaForCausalLM' has no ...
    """
    config_path = Path(folder) / "config.json"
    architectures = model_config.get("architectures") or []
    if not architectures or not isinstance(architectures[0], str):
        raise VLLMLayoutError(f"{config_path}: no 'architectures' entry, so vLLM cannot tell which model to build; "
                              "re-save the model with save_pretrained, or " + _TRANSFORMERS_FIX)
    arch = architectures[0]
    if prm_kind(convention.head, "head").name == "classifier":
        if arch in NATIVE_PRM_ARCHITECTURES:
            return VLLMLayout(arch, "auto")
        if arch.endswith("ForTokenClassification"):
            return VLLMLayout(arch, "classify")
        raise VLLMLayoutError(
            f"{config_path}: architecture {arch!r} has no token-classification head vLLM can load (it loads "
            f"*ForTokenClassification folders through --convert classify and {', '.join(NATIVE_PRM_ARCHITECTURES)} "
            "natively); save the PRM with AutoModelForTokenClassification (prm.training does), or " + _TRANSFORMERS_FIX)
    if not arch.endswith("ForCausalLM"):
        raise VLLMLayoutError(f"{config_path}: architecture {arch!r} is not a causal LM, but the {convention.name!r} "
                              "convention reads next-token logits; fix prm_convention.json's head, or "
                              + _TRANSFORMERS_FIX)
    good, bad = candidate_ids(tokenizer, convention)
    tokens = tokenizer.convert_ids_to_tokens([bad, good])
    if tokenizer.convert_tokens_to_ids(tokens) != [bad, good]:
        raise VLLMLayoutError(f"the tokenizer of {folder} does not map the marks' tokens {tokens} back to their ids "
                              f"{[bad, good]}, which vLLM's classifier_from_token needs; " + _TRANSFORMERS_FIX)
    # [bad, good]: column 1 is P(good), as for the token-classification heads (0 = bad, 1 = good).
    return VLLMLayout(arch, "classify", {"classifier_from_token": tokens, "method": "no_post_processing"})


def vllm_engine_kwargs(folder: str | Path, layout: VLLMLayout, config: ScorerConfig, *, dtype: str,
                       max_model_len: int | None, on_cpu: bool) -> dict[str, Any]:
    """``vllm.LLM`` arguments for scoring ``folder`` (the pooler config is added in the worker, where vLLM is
    imported). Prefix caching is off: token-level pooling never reads the cache (vLLM skips it for them).

    >>> kwargs = vllm_engine_kwargs("m", VLLMLayout("LlamaForTokenClassification", "classify"), ScorerConfig(),
    ...                             dtype="float32", max_model_len=1024, on_cpu=True)
    >>> kwargs["runner"], kwargs["convert"], kwargs["dtype"], kwargs["enforce_eager"], kwargs["max_model_len"]
    ('pooling', 'classify', 'float32', True, 1024)
    """
    kwargs: dict[str, Any] = {
        "model": str(folder),
        "runner": "pooling",
        "convert": layout.convert,
        "trust_remote_code": config.trust_remote_code,
        "enable_prefix_caching": False,
        "seed": 0,
        **device_engine_kwargs(on_cpu=on_cpu, native_bf16=False, dtype=dtype,
                               gpu_memory_utilization=config.gpu_memory_utilization,
                               kv_cache_gib=config.kv_cache_gib),
    }
    if layout.hf_overrides:
        kwargs["hf_overrides"] = dict(layout.hf_overrides)
    if max_model_len is not None:
        kwargs["max_model_len"] = max_model_len
    return kwargs
