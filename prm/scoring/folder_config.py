"""What a PRM folder declares (``prm_convention.json``, ``config.json``), read with errors that name the file,
what is wrong in it and how to fix it, before any weights load.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from prm.files import json_kind
from prm.format import CONVENTION_FILE, CONVENTIONS, StepTagConvention
from prm.scoring.kinds import known_names, prm_kind

# The keys a convention file must hold (good_token / bad_token only for an lm_tokens head).
CONVENTION_KEYS = ("name", "step_tag", "head")
# A token-classification PRM head has two classes, 0 = bad and 1 = good: the scorer reads softmax(logits)[1].
PRM_CLASSES = 2
_CONVENTION_FIX = ("rewrite it with StepTagConvention(...).save(folder), or save a known convention, e.g. "
                   f"CONVENTIONS['prm-pipeline'].save(folder) (known: {sorted(CONVENTIONS)})")


def _read_object(path: Path, fix: str) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}:{err.lineno}: not JSON ({err.msg} at column {err.colno}); {fix}") from None
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not UTF-8 text; {fix}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: {json_kind(data)}, not a JSON object; {fix}")
    return data


def read_convention(folder: str | Path) -> StepTagConvention:
    """The convention ``folder/prm_convention.json`` declares; a ValueError naming the file and the fix when it
    is not JSON, not an object, lacks a key, or names an unknown head.

    >>> read_convention("/nonexistent")
    Traceback (most recent call last):
    ...
    FileNotFoundError: /nonexistent has no prm_convention.json...
    """
    path = Path(folder) / CONVENTION_FILE
    if not path.is_file():
        return StepTagConvention.load(folder)  # its FileNotFoundError says how to declare a convention
    data = _read_object(path, _CONVENTION_FIX)
    missing = [k for k in CONVENTION_KEYS if not isinstance(data.get(k), str) or not data[k]]
    if missing:
        raise ValueError(f"{path}: missing or empty {missing} (a convention names its {list(CONVENTION_KEYS)} as "
                         f"strings); {_CONVENTION_FIX}")
    if data["head"] not in known_names():
        raise ValueError(f"{path}: head={data['head']!r} must be one of the PRM kinds {known_names()}; "
                         f"{_CONVENTION_FIX}")
    try:
        return StepTagConvention.load(folder)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{path}: {err}; {_CONVENTION_FIX}") from None


def custom_head(config: dict[str, Any], convention: StepTagConvention) -> bool:
    """Whether the folder keeps its token-classification head in its own code (``auto_map`` names an AutoModel
    and no AutoModelForTokenClassification), as Qwen2.5-Math-PRM does."""
    auto_map = config.get("auto_map") or {}
    return (_is_classifier(convention) and "AutoModel" in auto_map
            and "AutoModelForTokenClassification" not in auto_map)


def read_model_config(folder: str | Path, convention: StepTagConvention) -> dict[str, Any]:
    """``folder/config.json``, checked: JSON, and a two-class head (``num_labels`` / ``id2label``) when the
    convention reads a transformers token-classification head, so a wrong head fails here, not at the first
    score. A head in the folder's own code sets its size there (Qwen2.5-Math-PRM's has 2 outputs whatever its
    config says; vLLM overrides its num_labels to 2 for the same reason), so it is not checked."""
    path = Path(folder) / "config.json"
    if not path.is_file():
        raise FileNotFoundError(f"{folder} has no config.json; point at a Hugging Face model folder")
    config = _read_object(path, "restore the model folder's config.json (save_pretrained writes it)")
    if _is_classifier(convention) and not custom_head(config, convention):
        id2label = config.get("id2label")
        declared = {"num_labels": config.get("num_labels"),
                    "id2label": len(id2label) if isinstance(id2label, dict) else None}
        wrong = {k: n for k, n in declared.items() if n is not None and n != PRM_CLASSES}
        if wrong:
            raise ValueError(f"{path}: {', '.join(f'{k} gives {n} classes' for k, n in wrong.items())}, but a "
                             f"token-classification PRM head has {PRM_CLASSES} (0 = bad, 1 = good); this folder is not "
                             "a PRM of that kind - train one with prm.training, or declare the convention that "
                             "matches its head in prm_convention.json")
    return config


def _is_classifier(convention: StepTagConvention) -> bool:
    """Whether ``convention`` reads a two-class token-classification head (the ``classifier`` PRM kind)."""
    return prm_kind(convention.head, "head").name == "classifier"
