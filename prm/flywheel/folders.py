"""Where a round's models live on disk: one folder per version, never overwritten.

A round's PRM lands in ``round-<k>/prm-<version>`` and its RL run in ``round-<k>/rl-<version>`` (the policy in
``rl-<version>/policy``), ``<version>`` being the weights digest the registry records. A rerun of the round writes
a new folder beside the old one (or keeps the old one when the weights come out identical), so a later round's
parent and a policy's reward PRM keep their weights whatever is re-materialized after them
(``prm.training.new_version``).
"""

from __future__ import annotations

import os
from pathlib import Path

from prm.training import new_version

__all__ = ["new_version", "round_dir"]  # new_version is prm.training's (the prm_model asset writes the same way)


def round_dir(models_dir: str | os.PathLike[str], k: int) -> Path:
    """The folder of round ``k``'s models.

    >>> round_dir("/models", 2).as_posix()
    '/models/round-2'
    """
    return Path(models_dir) / f"round-{k}"
