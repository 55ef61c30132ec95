"""Where the pipeline's PRM files live: one paths object shared by the prm, rl, search and check assets.

Each training of the ``prm_model`` asset lands in its own folder, ``versions/prm-<version>`` (the registry's
version, :func:`prm.training.new_version`), which nothing writes again; ``LATEST`` names the newest. A model cache
from before versioned folders holds its PRM in ``model/``, which stays readable until a training publishes one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from prm.files import atomic_write_text
from prm.models import FOLDER_NAME, POINTER, VERSIONS, newest_version, trained_root
from prm.training.versions import new_version


@dataclass(frozen=True)
class PRMArtifacts:
    """The PRM folder tree under ``root`` (default: ``<model cache>/prm``, git-ignored).

    >>> import tempfile
    >>> art = PRMArtifacts(Path(tempfile.mkdtemp()))
    >>> art.trained_model()  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    FileNotFoundError: no PRM under ...: materialize prm_model first (the prm job trains it)
    """

    root: Path

    @classmethod
    def default(cls) -> PRMArtifacts:
        return cls(trained_root())

    @property
    def training_set(self) -> Path:
        """The saved training set (``prm.training.TrainingSet.save``)."""
        return self.root / "training_set"

    @property
    def versions(self) -> Path:
        """The folder of every trained PRM version (``versions/prm-<version>``)."""
        return self.root / VERSIONS

    @property
    def pointer(self) -> Path:
        """The file naming the newest version folder."""
        return self.root / POINTER

    def plot(self, name: str) -> Path:
        """A figure beside the PRM, e.g. ``plot("best_of_n")`` -> ``<root>/best_of_n.png``."""
        return self.root / f"{name}.png"

    def file(self, name: str) -> Path:
        """Any other file beside the PRM (a result the checks read back)."""
        return self.root / name

    def new_model(self, build: Callable[[Path], object]) -> Path:
        """Run ``build(folder)`` (e.g. ``train_prm(ts, folder, config)``) into a new version folder and return it;
        a version whose weights are already there keeps its folder as it is. :meth:`publish` makes it the newest."""
        return new_version(self.versions, "prm", build)[0]

    def publish(self, folder: Path) -> None:
        """Make ``folder`` (a version :meth:`new_model` returned) the one :meth:`trained_model` resolves, in one
        atomic write: a reader sees the previous newest or this one."""
        folder = Path(folder)
        if folder.parent != self.versions or not FOLDER_NAME.match(folder.name):
            raise ValueError(f"{folder} is not a version folder under {self.versions}; publish what new_model "
                             "returned")
        if not (folder / "config.json").is_file():
            raise FileNotFoundError(f"{folder} holds no model (no config.json); publish a finished version")
        atomic_write_text(self.pointer, folder.name + "\n")

    def trained_model(self) -> Path:
        """The newest PRM folder (:func:`prm.models.newest_version`): the version ``LATEST`` names, else a
        pre-versioning ``model/`` folder; FileNotFoundError saying what to materialize when there is none,
        ValueError when ``LATEST`` is malformed or names a missing folder."""
        return newest_version(self.root)
