"""Model versions on disk: one folder per version, named after its weights digest, never overwritten.

The one owner of the scheme the flywheel (``round-<k>/prm-<version>``) and the ``prm_model`` asset
(``<model cache>/prm/versions/prm-<version>``) both write: ``<version>`` is the digest the registry records, so a
registry row's ``uri`` holds its weights for good, whatever is trained after it.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from prm.files import atomic_write_dir
from prm.models import weights_digest

T = TypeVar("T")
_BUILDING = ".building-"  # a build in progress (or killed): never a version


def new_version(parent: Path, stem: str, build: Callable[[Path], T], weights: str = "") -> tuple[Path, T]:
    """Run ``build(folder)`` into a fresh folder, then name it ``parent/<stem>-<digest>`` after the weights in
    ``folder/weights`` (the folder itself when empty); returns that folder and what ``build`` returned.

    An existing folder of that name holds the same weights and is kept as it is: nothing registered is ever
    replaced. A build killed midway leaves only a hidden folder (never a version; safe to delete once no build
    is going: a concurrent one may be building there).
    """
    parent.mkdir(parents=True, exist_ok=True)
    staging = parent / f"{_BUILDING}{stem}-{uuid.uuid4().hex[:8]}"
    results: list[T] = []
    try:
        atomic_write_dir(staging, lambda tmp: results.append(build(tmp)))
        final = parent / f"{stem}-{weights_digest(staging / weights if weights else staging)}"
        if not final.exists():
            os.replace(staging, final)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return final, results[0]
