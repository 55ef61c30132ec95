"""The newest trained version under a PRM root: ``LATEST`` names a folder of ``versions/`` (each training's own,
never written again); a root from before versioned folders holds its one PRM in ``model/``.

The one reader of that scheme: :class:`prm.training.PRMArtifacts` writes it, and :func:`prm.models.local_model`
resolves a root (``models/prm``) to the folder it names, so ``--prm models/prm`` (or ``--prm trained``, the root
under the model cache wherever ``PRM_MODEL_CACHE`` puts it) means "the newest PRM".
"""

from __future__ import annotations

import re
from pathlib import Path

TRAINED = "trained"  # the name every PRM argument takes for the prm_model asset's newest version
PRM_ROOT = "prm"  # the prm_model asset's root under the model cache
POINTER = "LATEST"  # file under the root naming the newest version folder
VERSIONS = "versions"  # folder under the root holding one folder per trained PRM
LEGACY_MODEL = "model"  # the single PRM folder of caches written before versioned folders
_POINTER_BYTES = 256  # a version folder's name is ~20 characters; anything far longer is not a pointer
# A folder name, never a path: no separator, no "." or "..". Linear: one character class, no nesting.
FOLDER_NAME = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9._-]{0,127}\Z")


def trained_root() -> Path:
    """Where the ``prm_model`` asset trains: ``<model cache>/prm`` (``prm.training.PRMArtifacts.default``)."""
    from prm.models.cache import model_cache_dir

    return model_cache_dir() / PRM_ROOT


def is_prm_root(root: Path) -> bool:
    """True when ``root`` holds a ``LATEST`` pointer or a pre-versioning ``model/`` folder."""
    return (root / POINTER).is_file() or (root / LEGACY_MODEL / "config.json").is_file()


def newest_version(root: Path) -> Path:
    """The newest PRM folder under ``root``: the version ``LATEST`` names, else a pre-versioning ``model/`` folder;
    FileNotFoundError saying what to materialize when there is none, ValueError when ``LATEST`` is malformed or
    names a missing folder.

    >>> import tempfile
    >>> newest_version(Path(tempfile.mkdtemp()))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    FileNotFoundError: no PRM under ...: materialize prm_model first (the prm job trains it)
    """
    pointer = root / POINTER
    if pointer.is_file():
        return _pointed(pointer, root / VERSIONS)
    legacy = root / LEGACY_MODEL
    if (legacy / "config.json").is_file():
        return legacy
    raise FileNotFoundError(f"no PRM under {root} (no {POINTER} file, no {LEGACY_MODEL}/ folder): "
                            "materialize prm_model first (the prm job trains it)")


def _pointed(pointer: Path, versions: Path) -> Path:
    with pointer.open("rb") as f:
        raw = f.read(_POINTER_BYTES + 1)
    try:
        name = raw.decode("utf-8").strip()
    except UnicodeDecodeError:
        name = ""
    if len(raw) > _POINTER_BYTES or not FOLDER_NAME.match(name):
        raise ValueError(f"{pointer} does not name a version folder (it should hold one folder name of "
                         f"{versions}, e.g. prm-0123456789ab); delete it and re-materialize prm_model, or "
                         f"write the name of the version to use into it")
    folder = versions / name
    if not (folder / "config.json").is_file():
        raise ValueError(f"{pointer} names {name}, but {folder} holds no model (no config.json); write "
                         "the name of an existing version into it, or re-materialize prm_model")
    return folder
