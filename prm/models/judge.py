"""The fine-tuned judge: SmolLM2 with the shipped LoRA adapter merged in, built once into the model cache."""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
from pathlib import Path

from prm.models.constants import COMPLETE_MARKER, JUDGE_CARD_BAND, JUDGE_CARD_FILE, LOCK_POLL_S, LOCK_TIMEOUT_S
from prm.models.digests import file_sha256, stream_into
from warehouse import exclusive

log = logging.getLogger(__name__)

# Every file of a peft adapter that changes the merged model: its config (rank, lora_alpha, target modules: alpha
# 32 -> 3200 scales the update 100x) and its weights.
ADAPTER_FILES = ("adapter_config.json", "adapter_model.*")


def adapter_digest(folder: Path) -> str:
    """sha256 over the adapter's config and weight files (name and whole bytes): what its card records and the
    merge checks."""
    digest = hashlib.sha256()
    for path in sorted({p for pattern in ADAPTER_FILES for p in folder.glob(pattern)}):
        digest.update(path.name.encode())
        stream_into(digest, path)
    return digest.hexdigest()


def verify_adapter(folder: Path) -> str:
    """The adapter's digest when it matches its card; a clear error when a file is missing or altered."""
    card_path = folder / JUDGE_CARD_FILE
    if not (folder / "adapter_config.json").is_file() or not card_path.is_file():
        raise FileNotFoundError(f"no judge adapter at {folder} (adapter_config.json and {JUDGE_CARD_FILE}); restore "
                                "it with `git checkout -- prm/shipped/smollm2-judge` or rebuild it with `make judge`")
    digest = adapter_digest(folder)
    if _read_card(card_path).get("digest") != digest:
        raise ValueError(f"the judge adapter at {folder} does not match the digest in its card: it was altered or "
                         "partly copied; restore it with `git checkout -- prm/shipped/smollm2-judge` or `make judge`")
    return digest


def judge_card_problems(card: dict | None, band: dict[str, tuple[float, float]] | None = None) -> list[str]:
    """What keeps a judge card's held-out table out of :data:`JUDGE_CARD_BAND` ([] = fine).

    >>> judge_card_problems({"eval": {"coverage": 1.0, "correct_acc": 0.93, "first_error_acc": 0.17}})
    ['first_error_acc: 0.17 is outside [0.3, 1.0]']
    """
    if not card or "eval" not in card:
        return [f"no {JUDGE_CARD_FILE} with a held-out table: this folder was not built by prm.judge_training"]
    problems = []
    for metric, (low, high) in (band or JUDGE_CARD_BAND).items():
        value = card["eval"].get(metric)
        if value is None or not low <= value <= high:
            problems.append(f"{metric}: {value} is outside [{low}, {high}]")
    return problems


def read_judge_card(folder: Path) -> dict | None:
    """The ``judge_card.json`` in ``folder`` (the adapter's, or the merged judge's copy), or None."""
    path = folder / JUDGE_CARD_FILE
    return _read_card(path) if path.is_file() else None


def _read_card(path: Path) -> dict:
    """A judge card's JSON object; a card that is not one is a ValueError naming the file and the fix."""
    fix = "restore it with `git checkout -- prm/shipped/smollm2-judge` or rebuild the judge with `make judge`"
    try:
        card = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise ValueError(f"judge card {path} is not UTF-8 text ({exc.reason} at byte {exc.start}); {fix}") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"judge card {path} is not JSON ({exc.msg} at line {exc.lineno} column {exc.colno}); "
                         f"{fix}") from None
    except RecursionError:
        raise ValueError(f"judge card {path} is JSON nested too deeply to read; {fix}") from None
    if not isinstance(card, dict):
        raise ValueError(f"judge card {path} holds a JSON {type(card).__name__}, not an object; {fix}")
    return card


def _manifest(folder: Path) -> dict[str, dict[str, int | str]]:
    """``{file name: {"bytes", "sha256"}}`` of every file of a merged judge but its completion marker."""
    return {p.name: {"bytes": p.stat().st_size, "sha256": file_sha256(p)}
            for p in sorted(folder.iterdir()) if p.is_file() and p.name != COMPLETE_MARKER}


def merged_problem(out_dir: Path, digest: str) -> str | None:
    """Why the merged judge at ``out_dir`` cannot be served as the merge of the adapter with ``digest`` (None: it
    can): no completion marker, one from another adapter or an older build, or a file missing, resized or
    altered since the merge (its marker lists every file's size and sha256, whole file)."""
    marker = out_dir / COMPLETE_MARKER
    if not marker.is_file():
        return "it was never finished"
    try:
        built = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        built = None
    if not isinstance(built, dict) or not isinstance(built.get("files"), dict) or not built["files"]:
        return "its marker is from an older build that listed no file digests"
    if built.get("adapter") != digest:
        return "it was merged from another adapter"
    for name, want in built["files"].items():
        path = out_dir / name
        if not path.is_file() or not isinstance(want, dict):
            return f"{name} is missing"
        if path.stat().st_size != want.get("bytes"):
            return f"{name} has {path.stat().st_size} bytes, not the {want.get('bytes')} it was built with"
        if file_sha256(path) != want.get("sha256"):
            return f"{name} was altered since the merge (its sha256 differs)"
    return None


def merge_judge(adapter: Path, base: Path, out_dir: Path) -> Path:
    """``base`` with ``adapter`` merged, saved at ``out_dir`` (weights and tokenizer); rebuilt when the adapter's
    digest changes or a file of the merged judge no longer matches the digests its marker recorded (verified on
    every load, whole files), process-safe, and renamed into place so no reader sees half a model."""
    digest = verify_adapter(adapter)
    if merged_problem(out_dir, digest) is None:
        return out_dir
    with exclusive(out_dir.with_name(out_dir.name + ".lock"), timeout_s=LOCK_TIMEOUT_S, poll_s=LOCK_POLL_S):
        problem = merged_problem(out_dir, digest)
        if problem is None:
            return out_dir
        if out_dir.exists():
            log.warning("rebuilding the merged judge at %s: %s", out_dir, problem)
        from peft import PeftModel
        from transformers import AutoModelForCausalLM, AutoTokenizer

        tmp = out_dir.with_name(out_dir.name + ".partial")
        shutil.rmtree(tmp, ignore_errors=True)
        model = AutoModelForCausalLM.from_pretrained(str(base), dtype="float32")
        merged = PeftModel.from_pretrained(model, str(adapter)).merge_and_unload()
        merged.save_pretrained(tmp, safe_serialization=True)
        AutoTokenizer.from_pretrained(str(base)).save_pretrained(tmp)
        shutil.copy(adapter / JUDGE_CARD_FILE, tmp / JUDGE_CARD_FILE)
        (tmp / COMPLETE_MARKER).write_text(json.dumps({"adapter": digest, "files": _manifest(tmp)}, indent=1) + "\n")
        shutil.rmtree(out_dir, ignore_errors=True)
        tmp.rename(out_dir)
    return out_dir
