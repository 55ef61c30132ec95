"""The folder ``train_prm`` writes a PRM into: new, empty, or an earlier PRM's, which the save empties first.

Saving over an earlier model must not leave its files behind: a tokenizer's ``chat_template.jinja``, a sharded
model's index, another head's convention or recipe file would all be read back as part of the new PRM (a stale
SmolLM2 chat template once changed every score of a char-level PRM saved over it).
"""

from __future__ import annotations

from pathlib import Path

from prm.training.constants import CARD_FILE

# What marks a folder as a model's (finished: the card; any HF save: config.json): its files may be replaced.
_MODEL_MARKERS = (CARD_FILE, "config.json")


def check_out(out: Path) -> None:
    """Refuse, before any training, an output that would fail at the save or lose files that are not a model's."""
    if out.exists() and not out.is_dir():
        raise ValueError(f"the output {out} is an existing file, and train_prm writes a PRM folder there; pass a "
                         "new folder path (or an earlier PRM folder to overwrite)")
    loose = _loose_files(out) if out.is_dir() else []
    if loose and not any((out / m).is_file() for m in _MODEL_MARKERS):
        names = sorted(p.name for p in loose)[:5]
        raise ValueError(f"the output {out} holds files that are not a model's ({', '.join(names)}, ...); train_prm "
                         "replaces every file of the folder it writes, so pass a new or empty folder, or an earlier "
                         "PRM folder to overwrite")


def clear_model_files(out: Path) -> None:
    """Make ``out`` and delete every file directly in it, the card first (a folder with a card is complete);
    subfolders (the training checkpoints a resume reads) stay."""
    out.mkdir(parents=True, exist_ok=True)
    (out / CARD_FILE).unlink(missing_ok=True)
    for path in _loose_files(out):
        path.unlink(missing_ok=True)


def _loose_files(folder: Path) -> list[Path]:
    return [p for p in folder.iterdir() if p.is_file() or p.is_symlink()]
