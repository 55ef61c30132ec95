"""The model cache folder (entries are built under ``warehouse.locks.exclusive``)."""

from __future__ import annotations

import os
from pathlib import Path

from prm.models.constants import DEFAULT_CACHE_DIRNAME, MODEL_CACHE_ENV
from warehouse import PROJECT_ROOT


def model_cache_dir() -> Path:
    """The model cache: ``$PRM_MODEL_CACHE`` if set, else ``<project>/models``.

    >>> isinstance(model_cache_dir(), Path)
    True
    """
    override = os.environ.get(MODEL_CACHE_ENV)
    return Path(override).expanduser() if override else PROJECT_ROOT / DEFAULT_CACHE_DIRNAME
