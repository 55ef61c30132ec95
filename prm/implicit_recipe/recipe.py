"""The recipe an LM-head PRM folder carries (``implicit_prm.json``), read and checked in one place.

The recipe names the reference the PRM's log-ratios are read against, ``beta`` (the reward scale), what the
rewards were trained on (``labels``), the reference floor and off-policy limit, and the digest of the
reference's tokenizer at training time. Scoring reads it through :func:`read_recipe` and
:func:`read_scoring_rule`, which refuse values that would score nonsense (NaN, inverted, flat or overflowing
scores, an unknown ``labels``), and :func:`check_reference_tokenizer` refuses a reference whose tokenizer is
not the one the PRM was trained against (its token ids would mean other characters: scores near 1 for anything).
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
from pathlib import Path
from typing import Any

from prm.models import reference_name

log = logging.getLogger(__name__)

IMPLICIT_CONFIG_FILE = "implicit_prm.json"  # the recipe in a saved folder: what marks it as an LM-head PRM
IMPLICIT_LABELS = ("outcome", "step")  # what the rewards are trained against (prefix or per-step scoring)
# beta scales a sum of per-token log-ratios into a logit. PRIME uses 0.05, this project's recipes 0.05-0.5; past
# 100 a single token's log-ratio of 8 is a logit of 800 (past exp's range), so every score is 0 or 1.
MAX_BETA = 100.0
REFERENCE_TOKENIZER_KEY = "reference_tokenizer"  # the recipe's field holding tokenizer_digest of the reference
_RETRAIN = "retrain the folder with prm.training.train_prm (head='lm')"


def check_beta(beta: Any, where: str = "beta") -> float:
    """``beta`` as a float when it is a finite number in (0, MAX_BETA]; a ValueError saying why otherwise.

    >>> check_beta(0.5)
    0.5
    >>> check_beta(1e6)
    Traceback (most recent call last):
    ...
    ValueError: beta=1000000.0 must be a finite number in (0, 100.0]: it scales each step's log-ratio sum...
    """
    if isinstance(beta, bool) or not isinstance(beta, int | float) or not (
            math.isfinite(beta) and 0 < beta <= MAX_BETA):
        raise ValueError(f"{where}={beta!r} must be a finite number in (0, {MAX_BETA}]: it scales each step's "
                         "log-ratio sum into a logit (negative inverts the scores, 0 makes them all 0.5, a huge "
                         "one overflows); PRIME uses 0.05")
    return float(beta)


def tokenizer_digest(tokenizer: Any) -> str:
    """16 hex of sha256 over the tokenizer's vocabulary (every token and its id, added tokens included): two
    tokenizers with the same digest turn text into the same ids.

    >>> class Vocab:
    ...     def __init__(self, v): self.v = v
    ...     def get_vocab(self): return self.v
    >>> tokenizer_digest(Vocab({"a": 0, "b": 1})) == tokenizer_digest(Vocab({"b": 1, "a": 0}))
    True
    >>> tokenizer_digest(Vocab({"a": 0, "b": 1})) == tokenizer_digest(Vocab({"a": 1, "b": 0}))
    False
    """
    vocab = sorted(tokenizer.get_vocab().items(), key=lambda kv: (kv[1], kv[0]))
    return hashlib.sha256(json.dumps(vocab, ensure_ascii=True).encode()).hexdigest()[:16]


def model_tokenizer_digest(model: str | Path) -> str:
    """:func:`tokenizer_digest` of the tokenizer of ``model`` (any name :func:`prm.models.resolve_model` takes)."""
    from transformers import AutoTokenizer

    from prm.models import resolve_model

    return tokenizer_digest(AutoTokenizer.from_pretrained(str(resolve_model(model))))


def _load(folder: str | Path) -> tuple[Path, dict]:
    path = Path(folder) / IMPLICIT_CONFIG_FILE
    try:
        recipe = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as err:
        raise ValueError(f"{path} is not a readable implicit-PRM config ({err}); {_RETRAIN}") from None
    if not isinstance(recipe, dict):
        raise ValueError(f"{path} holds a JSON {type(recipe).__name__}, not an object; {_RETRAIN}")
    return path, recipe


def read_recipe(folder: str | Path) -> tuple[str, float, str]:
    """(reference model, beta, labels) from ``folder``'s ``implicit_prm.json``; a ValueError naming the file when
    it is missing or broken, ``beta`` is not in (0, MAX_BETA] or ``labels`` is not one of IMPLICIT_LABELS.

    >>> read_recipe("/nonexistent")
    Traceback (most recent call last):
    ...
    ValueError: /nonexistent/implicit_prm.json is not a readable implicit-PRM config...
    """
    path, recipe = _load(folder)
    base = reference_name(recipe)  # the rule the folder's version digests the reference by
    if base is None:
        raise ValueError(f"{path} names no reference model ('reference' or 'base_model'); {_RETRAIN}")
    try:
        beta = check_beta(recipe.get("beta"))
    except ValueError as err:
        raise ValueError(f"{path}: {err}; fix it or {_RETRAIN}") from None
    labels = recipe.get("labels", "outcome")
    if labels not in IMPLICIT_LABELS:
        raise ValueError(f"{path}: labels={labels!r} must be one of {IMPLICIT_LABELS} (step: each step scored on "
                         f"its own; outcome: by its prefix); fix it or {_RETRAIN}")
    return base, beta, labels


def read_scoring_rule(folder: str | Path) -> tuple[float | None, float | None]:
    """``(ref_floor, ood_ref_logprob)`` of an LM-head PRM's recipe: the floor under the reference's token
    probability and the off-policy limit on a step's mean reference log-probability (None for folders trained
    before either existed)."""
    path, recipe = _load(folder)
    floor, limit = recipe.get("ref_floor"), recipe.get("ood_ref_logprob")
    if floor is not None and not (isinstance(floor, int | float) and 0.0 < floor < 1.0):
        raise ValueError(f"{path}: ref_floor={floor!r} must be a probability in (0, 1) or null; {_RETRAIN}")
    if limit is not None and not (isinstance(limit, int | float) and math.isfinite(limit) and limit <= 0):
        raise ValueError(f"{path}: ood_ref_logprob={limit!r} must be a log-probability (<= 0) or null; {_RETRAIN}")
    return (None if floor is None else float(floor)), (None if limit is None else float(limit))


def check_reference_tokenizer(folder: str | Path, reference: str, ref_tokenizer: Any) -> None:
    """Refuse a reference whose tokenizer is not the one ``folder``'s PRM was trained against (the recipe's
    :data:`REFERENCE_TOKENIZER_KEY`); a folder trained before the digest was recorded loads with a warning."""
    path, recipe = _load(folder)
    recorded = recipe.get(REFERENCE_TOKENIZER_KEY)
    if recorded is None:
        log.warning("%s records no digest of its reference's tokenizer (trained before it was recorded): scores "
                    "are right only if %s still has the tokenizer it was trained against; %s to record it",
                    path, reference, _RETRAIN)
        return
    actual = tokenizer_digest(ref_tokenizer)
    if actual != recorded:
        raise ValueError(f"{path}: the reference {reference} has tokenizer {actual}, not the {recorded} this PRM was "
                         "trained against, so its token ids would be read as other text and every score would be "
                         f"meaningless; point 'reference' at the model it was trained against, or {_RETRAIN} "
                         "against this reference")
