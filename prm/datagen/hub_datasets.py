"""A dataset named as users name it (a Hugging Face id, a config and a split: ``openai/gsm8k``, ``main``, ``test``)
as a local JSONL file the pipeline reads like any other dataset file.

``datasets`` downloads and caches the split (under ``HF_HOME``, or offline from that cache with ``HF_HUB_OFFLINE=1``);
the split is then written once, atomically, under ``<model cache>/datasets/<id>/<config>/<split>.jsonl``, so later runs
and the Dagster sensor read a plain file. Offline with no cached copy, loading fails in one line saying what to do.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from prm.files import atomic_write_text
from prm.models import model_cache_dir

# owner/name as the hub spells ids (letters, digits, ".", "_", "-"); a bare name is a canonical dataset.
HUB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,95}(?:/[A-Za-z0-9][A-Za-z0-9._-]{0,95})?")
PART = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,95}")  # a config or split name (also a folder name here)


def hub_file(name: str, config: str | None = None, split: str = "train", cache: Path | None = None) -> Path:
    """The local JSONL of hub dataset ``name`` (``config``, ``split``); downloaded and written once, then reused.

    >>> hub_file("../etc", split="test")
    Traceback (most recent call last):
    ...
    ValueError: dataset.hub='../etc' is not a Hugging Face dataset id (owner/name, e.g. openai/gsm8k)
    """
    if not HUB_ID.fullmatch(name) or ".." in name:
        raise ValueError(f"dataset.hub={name!r} is not a Hugging Face dataset id (owner/name, e.g. openai/gsm8k)")
    for label, part in (("config", config), ("split", split)):
        if part is not None and (not PART.fullmatch(part) or ".." in part):
            raise ValueError(f"dataset.{label}={part!r} is not a dataset {label} name (letters, digits, . _ -)")
    out = (cache or model_cache_dir() / "datasets") / name / (config or "default") / f"{split}.jsonl"
    if out.is_file():
        return out
    try:
        import datasets

        rows = datasets.load_dataset(name, config, split=split)
    except Exception as err:  # offline, a wrong id/config/split, a gated dataset: all one line for the user
        reason = " ".join(str(err).split())[:300]
        raise ValueError(f"cannot load the hub dataset {name!r} (config {config!r}, split {split!r}): "
                         f"{type(err).__name__}: {reason}; check the id, config and split on the hub, download it "
                         "once on a machine with network (datasets caches it under HF_HOME; HF_HUB_OFFLINE=1 reads "
                         "that cache), or set dataset.path to a local .jsonl/.parquet file") from None
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out, "".join(json.dumps(row, ensure_ascii=False, default=str) + "\n" for row in rows))
    return out
