"""The models the repository ships, by name: one folder, ``prm/shipped/<name>``, per registered model.

A name here is what every place that takes a model accepts (:func:`prm.models.resolve_model`, ``load_prm``,
``prm-reward serve --prm``, a recipe's model fields); ``kind`` says what the model is and ``rebuild`` the make
target that rebuilds its folder in place. Adding a shipped model is one folder and one line of
:data:`SHIPPED_MODELS`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prm.models.constants import ARITH_POLICY_NAME, ARITH_PRM_NAME, JUDGE_NAME, SHIPPED_ROOT
from prm.models.digests import file_sha256

SHIPPED_KINDS = ("policy", "judge", "prm")
PRM_CARD_FILE = "prm_card.json"  # the shipped PRM's card: its recipe, figures and score digests
PRM_CARD_KEY = "shipped"  # the card's entry prm.training.ship writes and prm.models.verify_shipped_prm checks
PRM_DIGESTS_KEY = "score_digests"  # the entry's record of every file that changes a score (score_digests)
PRM_RESTORE = ("restore the folder with `git checkout -- prm/shipped/arith-prm`, remove a policy rebuilt in the "
               "model cache if the reference moved (`arith-policy` resolves there first), or rebuild the PRM with "
               "`make prm`")


@dataclass(frozen=True)
class ShippedModel:
    """One shipped model: its registered name, what it is (one of :data:`SHIPPED_KINDS`), how to rebuild it."""

    name: str
    kind: str
    rebuild: str  # the make target that rebuilds the folder in place

    def __post_init__(self) -> None:
        if self.kind not in SHIPPED_KINDS:
            raise ValueError(f"kind={self.kind!r} must be one of {SHIPPED_KINDS}")

    @property
    def folder(self) -> Path:
        """``prm/shipped/<name>``."""
        return SHIPPED_ROOT / self.name


SHIPPED_MODELS: dict[str, ShippedModel] = {
    ARITH_POLICY_NAME: ShippedModel(ARITH_POLICY_NAME, "policy", "make policy"),
    JUDGE_NAME: ShippedModel(JUDGE_NAME, "judge", "make judge"),
    ARITH_PRM_NAME: ShippedModel(ARITH_PRM_NAME, "prm", "make prm"),
}


def shipped_folder(name: str) -> Path:
    """The folder of the shipped model ``name``; a KeyError naming the shipped ones otherwise.

    >>> shipped_folder("arith-prm").relative_to(SHIPPED_ROOT.parent).as_posix()
    'shipped/arith-prm'
    """
    if name not in SHIPPED_MODELS:
        raise KeyError(f"{name!r} is not a shipped model; shipped: {sorted(SHIPPED_MODELS)}")
    return SHIPPED_MODELS[name].folder


def read_prm_card_entry(folder: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The shipped PRM's card and its ``shipped`` entry; a ValueError saying how to restore a card that is not one."""
    card_path = Path(folder) / PRM_CARD_FILE
    try:
        card = json.loads(card_path.read_text(encoding="utf-8"))
        entry = card[PRM_CARD_KEY]
        if not isinstance(entry, dict):
            raise TypeError(f"'{PRM_CARD_KEY}' is a JSON {type(entry).__name__}, not an object")
    except (OSError, ValueError, KeyError, TypeError, RecursionError) as exc:
        raise ValueError(f"{card_path}: no readable shipped-PRM card ({type(exc).__name__}: {exc}); "
                         f"{PRM_RESTORE}") from None
    return card, entry


def check_shipped_prm_files(folder: Path | None = None) -> Path:
    """The shipped PRM's folder after checking each file its card digests (weights, tokenizer, config, recipe)
    byte for byte, as resolving ``arith-prm`` does; a ValueError naming each file that changed or is missing.
    :func:`prm.models.verify_shipped_prm` also checks the reference policy's version."""
    folder = Path(folder) if folder is not None else shipped_folder(ARITH_PRM_NAME)
    _, entry = read_prm_card_entry(folder)
    files = (entry.get(PRM_DIGESTS_KEY) or {}).get("files") if isinstance(entry.get(PRM_DIGESTS_KEY), dict) else None
    if not isinstance(files, dict) or not files:
        raise ValueError(f"{folder}: its card records no digests of the files that change its scores; {PRM_RESTORE}")
    changed = [name for name, digest in sorted(files.items())
               if not (folder / str(name)).is_file() or file_sha256(folder / str(name)) != digest]
    if changed:
        raise ValueError(f"the shipped PRM in {folder} does not match the digests in its card ({', '.join(changed)} "
                         f"changed or missing); {PRM_RESTORE}")
    return folder
