"""A model's version: the digest of every file of its folder that changes the scores it gives, and of the reference an
LM-head PRM is read against.

One record (:func:`score_digests`) backs both the version (:func:`weights_digest`, the registry's ``version`` and
the part after ``@`` of :func:`model_version`) and the shipped PRM's card, so a swapped ``+``/``-`` in
``tokenizer.json``, a chat template, ``rope_theta``, ``beta`` or a rebuilt reference policy is a new version, and a
card check (:func:`check_score_files`) says which file changed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from prm.models.constants import ARITH_PRM_NAME
from prm.models.digests import file_sha256
from prm.models.registry import resolve_model
from prm.models.shipped import PRM_DIGESTS_KEY, PRM_RESTORE, read_prm_card_entry, shipped_folder

# Every file a loader reads that changes a score. Cards, READMEs and checkpoints are left out: writing a card after
# training (as the shipped PRM's build does) must not change the version it records.
SCORE_FILE_PATTERNS = (
    "*.safetensors", "*.bin", "*.gguf", "*.index.json",  # the weights, and which shard holds which tensor
    "config.json", "generation_config.json",  # the architecture (rms_norm_eps, rope_theta) and decoding defaults
    # text -> token ids, and the chat template: a tokenizer with "+" and "-" swapped reads every step as other text
    "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json", "vocab.json",
    "merges.txt", "tokenizer.model", "chat_template.jinja", "chat_template.json",
    "implicit_prm.json", "prm_convention.json",  # how a PRM is read: the LM-head recipe, the step-tag convention
    "*.py",  # a head kept in the folder's own code (trust_remote_code)
)
# The LM-head recipe file: prm.implicit_recipe.IMPLICIT_CONFIG_FILE, which reads it (a test holds the two names equal).
RECIPE_FILE = "implicit_prm.json"
VERSION_HEX = 12  # hex digits of a version: warehouse.ModelEntry.version's format


def reference_name(recipe: Any) -> str | None:
    """The reference model an LM-head PRM's recipe (the parsed ``implicit_prm.json``) names: ``reference``, else
    ``base_model`` (folders trained before the two could differ); None when it names none.

    >>> reference_name({"base_model": "arith-policy"}), reference_name({"reference": ""}), reference_name([])
    ('arith-policy', None, None)
    """
    name = (recipe.get("reference") or recipe.get("base_model")) if isinstance(recipe, dict) else None
    return name if isinstance(name, str) and name else None


def _recipe_reference(folder: Path) -> str | None:
    """:func:`reference_name` of the folder's recipe; None without a readable one (its loader refuses it)."""
    try:
        return reference_name(json.loads((folder / RECIPE_FILE).read_text(encoding="utf-8")))
    except (OSError, ValueError, RecursionError):
        return None


def score_digests(folder: str | Path) -> dict[str, Any]:
    """``{"files": {name: sha256}, "reference": "name@version" | hub id | None}`` of a model folder: every file of
    :data:`SCORE_FILE_PATTERNS` (whole bytes) and, for an LM-head PRM, the version of the reference its recipe
    names, resolved as scoring resolves it (:func:`prm.models.resolve_model`: a policy rebuilt in the model cache
    is another reference). A hub-id reference is its id: pin a revision in the id to version it.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "config.json").write_text("{}")
    >>> score_digests(folder)["files"]["config.json"][:12], score_digests(folder)["reference"]
    ('44136fa355b3', None)
    """
    return _score_digests(Path(folder), frozenset())


def _score_digests(folder: Path, seen: frozenset[Path]) -> dict[str, Any]:
    if not (folder / "config.json").is_file():
        raise FileNotFoundError(f"{folder} has no config.json, so it is not a model folder; pass the folder that "
                                "holds config.json and the weights")
    files = sorted({p for pattern in SCORE_FILE_PATTERNS for p in folder.glob(pattern) if p.is_file()})
    return {"files": {p.name: file_sha256(p) for p in files},
            "reference": _reference_version(folder, seen | {folder.resolve()})}


def _reference_version(folder: Path, seen: frozenset[Path]) -> str | None:
    """The reference's version; a reference that does not resolve (or leads back to the PRM) is recorded as such,
    so versioning never fails where loading will, and the loader says what to fix."""
    name = _recipe_reference(folder)
    if name is None:
        return None
    try:
        resolved = resolve_model(name)
    except (OSError, ValueError):
        return f"{name} (does not resolve)"
    if not isinstance(resolved, Path):
        return str(resolved)
    if resolved.resolve() in seen:
        return f"{name} (the PRM itself)"
    return f"{name}@{score_version(_score_digests(resolved, seen))}"


def score_version(digests: Mapping[str, Any]) -> str:
    """The :data:`VERSION_HEX`-hex version of a :func:`score_digests` record.

    >>> score_version({"files": {"config.json": "0" * 64}, "reference": None})
    '44e609a556d9'
    """
    canonical = json.dumps({"files": dict(digests["files"]), "reference": digests.get("reference")},
                           sort_keys=True, ensure_ascii=True)
    return hashlib.sha256(canonical.encode()).hexdigest()[:VERSION_HEX]


def weights_digest(folder: str | Path) -> str:
    """A model folder's version: :func:`score_version` of its :func:`score_digests` (the weights, the tokenizer
    files, the config, a PRM's recipe and convention, an LM-head PRM's reference). The version part of
    :func:`model_version`, and the ``version`` of the warehouse's model registry.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "config.json").write_text(json.dumps({"model_type": "llama"}))
    >>> len(weights_digest(folder)), weights_digest(folder) == weights_digest(str(folder))
    (12, True)
    """
    return score_version(score_digests(folder))


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


def score_changes(declared: Mapping[str, Any], actual: Mapping[str, Any]) -> list[str]:
    """What differs between a recorded :func:`score_digests` and the folder's now, one phrase per file altered,
    missing or added, and the reference when it resolves to another version ([] = the same model).

    >>> score_changes({"files": {"a.json": "1", "b.bin": "2"}, "reference": "p@1"},
    ...               {"files": {"a.json": "9", "c.py": "3"}, "reference": "p@2"})
    ['a.json changed', 'b.bin is missing', 'c.py was added', "the reference is now 'p@2', not 'p@1'"]
    """
    want, got = declared.get("files") or {}, actual.get("files") or {}
    out = []
    for name in sorted(set(want) | set(got)):
        if name not in got:
            out.append(f"{name} is missing")
        elif name not in want:
            out.append(f"{name} was added")
        elif want[name] != got[name]:
            out.append(f"{name} changed")
    if declared.get("reference") != actual.get("reference"):
        out.append(f"the reference is now {actual.get('reference')!r}, not {declared.get('reference')!r}")
    return out


def _well_formed(declared: Any) -> bool:
    files = declared.get("files") if isinstance(declared, Mapping) else None
    return (isinstance(files, Mapping) and bool(files)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in files.items())
            and isinstance(declared.get("reference"), str | None))


def check_score_files(folder: str | Path, declared: Any, *, fix: str) -> dict[str, Any]:
    """The folder's :func:`score_digests` when they equal ``declared`` (a card's record); a ValueError naming every
    file that changed (and a moved reference) otherwise, ending with ``fix`` (how to restore the folder)."""
    folder = Path(folder)
    if not _well_formed(declared):
        raise ValueError(f"{folder}: its card records no digests of the files that change its scores (a "
                         "{'files': {name: sha256}, 'reference': ...} record); " + fix)
    try:
        actual = score_digests(folder)
    except (OSError, ValueError) as exc:
        raise ValueError(f"{folder}: cannot digest its files ({exc}); {fix}") from None
    changes = score_changes(declared, actual)
    if changes:
        raise ValueError(f"the model in {folder} does not match the digests in its card: {'; '.join(changes)}. It "
                         f"would load and score differently from the model its card describes; {fix}")
    return actual


def verify_shipped_prm(folder: str | Path | None = None) -> dict[str, Any]:
    """The shipped PRM card's ``shipped`` entry, after checking every file that changes the PRM's scores (weights,
    tokenizer, config, recipe) and its reference policy against the card's digests; ``ValueError`` names each file
    that changed and says how to restore the folder."""
    folder = Path(folder) if folder is not None else shipped_folder(ARITH_PRM_NAME)
    _, entry = read_prm_card_entry(folder)
    check_score_files(folder, entry.get(PRM_DIGESTS_KEY), fix=PRM_RESTORE)
    return entry
