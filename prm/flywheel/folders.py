"""Where a round's models live on disk: one folder per version, never overwritten.

A round's PRM lands in ``round-<k>/prm-<version>`` and its RL run in ``round-<k>/rl-<version>`` (the policy in
``rl-<version>/policy``), ``<version>`` being the weights digest the registry records. A rerun of the round writes
a new folder beside the old one (or keeps the old one when the weights come out identical), so a later round's
parent and a policy's reward PRM keep their weights whatever is re-materialized after them.
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


def round_dir(models_dir: str | os.PathLike[str], k: int) -> Path:
    """The folder of round ``k``'s models.

    >>> round_dir("/models", 2).as_posix()
    '/models/round-2'
    """
    return Path(models_dir) / f"round-{k}"


def new_version(parent: Path, stem: str, build: Callable[[Path], T], weights: str = "") -> tuple[Path, T]:
    """Run ``build(folder)`` into a fresh folder, then name it ``parent/<stem>-<digest>`` after the weights in
    ``folder/weights`` (the folder itself when empty); returns that folder and what ``build`` returned.

    An existing folder of that name holds the same weights and is kept as it is: nothing registered is ever
    replaced. A build killed midway leaves only a hidden folder (never a version; safe to delete once no run of
    the flywheel is going: a concurrent run may be building there).
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
