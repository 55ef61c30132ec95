"""PRM kinds by name: what reads a step, one vocabulary for training (``PRMTrainConfig.head``) and scoring (a
folder's ``prm_convention.json`` ``head``, :func:`prm.scoring.load_prm`).

Each kind says how to recognise a folder of its kind (``detect``), how to load one into a
:class:`~prm.scoring.protocol.Scorer` (``load``) and, when prm.training can train it, the training function
(``trainer``). ``aliases`` are older names still read in existing folders, cards and configs. Functions are given
as ``"module:function"`` strings (imported on first use, so this registry imports no model code and prm.training,
which sits above scoring, can be named here) or as callables.

Adding a kind is one module (its scorer, ``detect`` and ``load``) plus one line of :data:`PRM_KINDS`
(docs/how-to/add-a-prm-kind.md).
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prm.format import CONVENTION_FILE

if TYPE_CHECKING:
    from prm.format import StepTagConvention
    from prm.scoring.config import ScorerConfig
    from prm.scoring.protocol import Scorer

Ref = Callable[..., Any] | str  # a function, or "module:function"


def _resolve(ref: Ref) -> Callable[..., Any]:
    if callable(ref):
        return ref
    module, _, name = ref.partition(":")
    return getattr(importlib.import_module(module), name)


@dataclass(frozen=True)
class PRMKind:
    """One kind of PRM: how a folder of it is recognised, loaded and (optionally) trained."""

    name: str
    summary: str  # what reads a step, in a sentence
    detect: Ref  # (folder: Path) -> bool: whether the folder holds a PRM of this kind
    load: Ref  # (folder: Path, config: ScorerConfig, convention: StepTagConvention | None) -> Scorer
    aliases: tuple[str, ...] = ()  # older names, read in existing files, cards and configs
    trainer: str | None = None  # "module:function" (source, out, config, resume) -> Path; None: not trainable here

    def detects(self, folder: Path) -> bool:
        """Whether ``folder`` holds a PRM of this kind."""
        return bool(_resolve(self.detect)(folder))

    def load_scorer(self, folder: Path, config: ScorerConfig,
                    convention: StepTagConvention | None = None) -> Scorer:
        """The PRM in ``folder``, loaded (``convention`` overrides the folder's own, for kinds that read one)."""
        return _resolve(self.load)(folder, config, convention)

    def train_function(self) -> Callable[..., Path]:
        """The function prm.training trains this kind with; a ValueError when it trains none."""
        if self.trainer is None:
            raise ValueError(f"prm.training trains no {self.name!r} PRM ({self.summary}); train one of "
                             f"{trainable_kinds()}")
        return _resolve(self.trainer)


def declares(kind: str) -> Callable[[Path], bool]:
    """A ``detect`` for kinds that read step tags: the folder's ``prm_convention.json`` names ``kind`` (or one of
    its aliases) as its ``head``. A missing or broken file detects nothing (the loader then says what is wrong)."""

    def detect(folder: Path) -> bool:
        try:
            head = json.loads((Path(folder) / CONVENTION_FILE).read_text(encoding="utf-8")).get("head")
        except (OSError, ValueError, AttributeError, RecursionError):
            return False
        return isinstance(head, str) and head in names_of(kind)

    return detect


PRM_KINDS: dict[str, PRMKind] = {
    "lm": PRMKind("lm", "the backbone's own LM head scores each step's tokens against a reference model",
                  detect="prm.scoring.implicit_scorer:is_lm_head_folder",
                  load="prm.scoring.implicit_scorer:load_implicit_prm", aliases=("implicit",),
                  trainer="prm.training.trainer:train_lm"),
    "classifier": PRMKind("classifier", "a two-class token-classification head read at each step tag",
                          detect=declares("classifier"), load="prm.scoring.scorer:load_tagged_prm",
                          aliases=("token_classification",), trainer="prm.training.trainer:train_classifier"),
    "lm_tokens": PRMKind("lm_tokens", "a causal LM's next-token logits of a good and a bad mark at each step tag "
                         "(Math-Shepherd)", detect=declares("lm_tokens"), load="prm.scoring.scorer:load_tagged_prm"),
}


def names_of(kind: str) -> tuple[str, ...]:
    """The registered name of ``kind`` and its aliases.

    >>> names_of("classifier")
    ('classifier', 'token_classification')
    """
    entry = PRM_KINDS[kind]
    return (entry.name, *entry.aliases)


def known_names() -> tuple[str, ...]:
    """Every name a PRM kind is read under: the registered ones, then the aliases."""
    return (*PRM_KINDS, *(a for kind in PRM_KINDS.values() for a in kind.aliases))


def prm_kind(name: str, what: str = "kind") -> PRMKind:
    """The kind registered under ``name`` or an alias of it; a ValueError listing the kinds otherwise.

    >>> prm_kind("token_classification").name, prm_kind("lm").name
    ('classifier', 'lm')
    >>> prm_kind("regression", "head")
    Traceback (most recent call last):
    ...
    ValueError: head='regression' must be one of the PRM kinds ('lm', 'classifier', 'lm_tokens', 'implicit', ...
    """
    if isinstance(name, str):
        if name in PRM_KINDS:
            return PRM_KINDS[name]
        for kind in PRM_KINDS.values():
            if name in kind.aliases:
                return kind
    raise ValueError(f"{what}={name!r} must be one of the PRM kinds {known_names()} (prm.scoring.PRM_KINDS)")


def trainable_kinds() -> tuple[str, ...]:
    """The kinds prm.training trains, by registered name.

    >>> trainable_kinds()
    ('lm', 'classifier')
    """
    return tuple(name for name, kind in PRM_KINDS.items() if kind.trainer is not None)


def detect_kind(folder: Path) -> PRMKind | None:
    """The first registered kind whose ``detect`` recognises ``folder``; None when none does."""
    return next((kind for kind in PRM_KINDS.values() if kind.detects(folder)), None)
