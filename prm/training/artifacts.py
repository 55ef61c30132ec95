"""Where the pipeline's PRM files live: one paths object shared by the prm, rl, search and check assets."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from prm.models import model_cache_dir


@dataclass(frozen=True)
class PRMArtifacts:
    """The PRM folder tree under ``root`` (default: ``<model cache>/prm``, git-ignored)."""

    root: Path

    @classmethod
    def default(cls) -> PRMArtifacts:
        return cls(model_cache_dir() / "prm")

    @property
    def training_set(self) -> Path:
        """The saved training set (``prm.training.TrainingSet.save``)."""
        return self.root / "training_set"

    @property
    def model(self) -> Path:
        """The prm_model asset's PRM folder."""
        return self.root / "model"

    def plot(self, name: str) -> Path:
        """A figure beside the PRM, e.g. ``plot("best_of_n")`` -> ``<root>/best_of_n.png``."""
        return self.root / f"{name}.png"

    def file(self, name: str) -> Path:
        """Any other file beside the PRM (a result the checks read back)."""
        return self.root / name

    def trained_model(self) -> Path:
        """:attr:`model`, or FileNotFoundError saying what to materialize when no PRM was trained there."""
        if not (self.model / "config.json").is_file():
            raise FileNotFoundError(f"no PRM at {self.model}: materialize prm_model first (the prm job trains it)")
        return self.model
