"""The folder ``train_prm`` writes a PRM into: new, empty, or one it wrote before, whose files the save replaces.

Saving over an earlier model must not leave its files behind: a tokenizer's ``chat_template.jinja``, a sharded
model's index, another head's convention or recipe file would all be read back as part of the new PRM (a stale
SmolLM2 chat template once changed every score of a char-level PRM saved over it). And it must never delete a file it
did not write: every save lists its files in a manifest (``prm_files.json``), the next save deletes exactly those, and
a folder holding any other file (a project's, a converted model's, a PRM saved before manifests) is refused, with the
files named, before training starts.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from prm.files import atomic_write_text
from prm.training.constants import CARD_FILE, CHECKPOINT_DIR, MANIFEST_FILE

SHOWN = 8  # file names an error lists before "and N more"
_CHECKPOINT = re.compile(r"checkpoint-[0-9]{1,12}")  # what HF's Trainer names its checkpoints (checkpoint-<step>)


def check_out(out: Path) -> None:
    """Refuse, before any training, an output the save would fail on or that holds files this project did not write
    (its own earlier files, listed in the folder's manifest, are replaced)."""
    if out.exists() and not out.is_dir():
        raise ValueError(f"the output {out} is an existing file, and train_prm writes a PRM folder there; pass a "
                         "new folder path (or a PRM folder train_prm wrote before, to overwrite it)")
    if not out.is_dir():
        return
    _unlisted(out)
    checkpoints = out / CHECKPOINT_DIR
    if checkpoints.is_dir():
        other = sorted(p.name for p in checkpoints.iterdir() if not (p.is_dir() and _CHECKPOINT.fullmatch(p.name)))
        if other:
            raise ValueError(f"the output's {checkpoints} holds entries that are not training checkpoints "
                             f"({_names(other)}); a fresh run deletes that folder, so move them out or pass another "
                             "--out")


def clear_model_files(out: Path) -> None:
    """Make ``out`` and delete the files its manifest lists, the card first (a folder with a card is complete) and the
    manifest last; refuses a folder holding any other file. Subfolders (the checkpoints a resume reads) stay."""
    out.mkdir(parents=True, exist_ok=True)
    listed = _unlisted(out)
    (out / CARD_FILE).unlink(missing_ok=True)
    for name in listed:
        path = out / name
        if path.is_file() or path.is_symlink():  # a listed name that is now a folder is not a file this save wrote
            path.unlink()
    (out / MANIFEST_FILE).unlink(missing_ok=True)


def write_manifest(out: Path) -> None:
    """List every file now directly in ``out``, and the card written next, as this save's: call it after the model's
    files and before the card. :func:`clear_model_files` left no other file there."""
    names = sorted({p.name for p in _loose_files(out)} - {MANIFEST_FILE} | {CARD_FILE})
    atomic_write_text(out / MANIFEST_FILE, json.dumps({"written_by": "prm.training.train_prm", "files": names},
                                                      indent=1) + "\n")


def clear_checkpoints(out: Path) -> None:
    """Delete ``out/checkpoints`` (a fresh run must not resume from another run's state), which :func:`check_out`
    found to hold nothing but the Trainer's ``checkpoint-<step>`` folders."""
    checkpoints = out / CHECKPOINT_DIR
    if checkpoints.is_dir():
        for path in checkpoints.iterdir():
            if path.is_dir() and not path.is_symlink() and _CHECKPOINT.fullmatch(path.name):
                shutil.rmtree(path)
        if not any(checkpoints.iterdir()):
            checkpoints.rmdir()


def _unlisted(out: Path) -> list[str]:
    """The file names ``out``'s manifest lists; ValueError naming the files a save would touch that it does not."""
    manifest = _read_manifest(out)
    loose = sorted(p.name for p in _loose_files(out) if p.name != MANIFEST_FILE)
    unknown = [name for name in loose if name not in (manifest or ())]
    if unknown and manifest is None and (CARD_FILE in loose or "config.json" in loose):
        raise ValueError(f"the output {out} holds a model with no {MANIFEST_FILE} ({_names(unknown)}): saved by "
                         f"another tool, or by train_prm before its folders listed their files, so train_prm will "
                         "not delete them; pass a new folder, or delete this one yourself if it is a PRM to replace")
    if unknown:
        raise ValueError(f"the output {out} holds files train_prm did not write ({_names(unknown)}); it replaces only "
                         f"the files its {MANIFEST_FILE} lists, so pass a new or empty folder, or move these out")
    return list(manifest or ())


def _read_manifest(out: Path) -> list[str] | None:
    """The manifest's file names (None without one); a manifest that is not this project's is refused."""
    path = out / MANIFEST_FILE
    if not path.is_file():
        return None
    try:
        names = json.loads(path.read_text(encoding="utf-8"))["files"]
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path} is not a manifest train_prm wrote ({type(exc).__name__}); pass a new folder, or "
                         "delete this one yourself if it is a PRM to replace") from None
    if not isinstance(names, list) or not all(_plain_name(n) for n in names):
        raise ValueError(f"{path} lists something other than plain file names of its folder; train_prm deletes only "
                         "those, so pass a new folder, or delete this one yourself")
    return names


def _plain_name(name: object) -> bool:
    return isinstance(name, str) and name not in ("", ".", "..") and Path(name).name == name and "\\" not in name


def _names(names: list[str]) -> str:
    return ", ".join(names[:SHOWN]) + (f" and {len(names) - SHOWN} more" if len(names) > SHOWN else "")


def _loose_files(folder: Path) -> list[Path]:
    return [p for p in folder.iterdir() if p.is_file() or p.is_symlink()]
