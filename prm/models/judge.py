"""The fine-tuned judge: SmolLM2 with the shipped LoRA adapter merged in, built once into the model cache."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

from prm.models.constants import COMPLETE_MARKER, JUDGE_CARD_BAND, JUDGE_CARD_FILE, LOCK_POLL_S, LOCK_TIMEOUT_S
from warehouse.locks import exclusive


def adapter_digest(folder: Path) -> str:
    """sha256 over the adapter's weight files (name and bytes): what its card records and the merge checks."""
    digest = hashlib.sha256()
    for path in sorted(folder.glob("adapter_model.*")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def verify_adapter(folder: Path) -> str:
    """The adapter's digest when it matches its card; a clear error when a file is missing or altered."""
    card_path = folder / JUDGE_CARD_FILE
    if not (folder / "adapter_config.json").is_file() or not card_path.is_file():
        raise FileNotFoundError(f"no judge adapter at {folder} (adapter_config.json and {JUDGE_CARD_FILE}); restore "
                                "it with `git checkout -- prm/judge_training/shipped` or rebuild it with `make judge`")
    digest = adapter_digest(folder)
    if _read_card(card_path).get("digest") != digest:
        raise ValueError(f"the judge adapter at {folder} does not match the digest in its card: it was altered or "
                         "partly copied; restore it with `git checkout -- prm/judge_training/shipped` or `make judge`")
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
    fix = "restore it with `git checkout -- prm/judge_training/shipped` or rebuild the judge with `make judge`"
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


def merge_judge(adapter: Path, base: Path, out_dir: Path) -> Path:
    """``base`` with ``adapter`` merged, saved at ``out_dir`` (weights and tokenizer); rebuilt when the adapter's
    digest changes, process-safe, and renamed into place so no reader sees half a model."""
    digest = verify_adapter(adapter)
    marker = out_dir / COMPLETE_MARKER
    if marker.is_file() and marker.read_text().strip() == digest:
        return out_dir
    with exclusive(out_dir.with_name(out_dir.name + ".lock"), timeout_s=LOCK_TIMEOUT_S, poll_s=LOCK_POLL_S):
        if marker.is_file() and marker.read_text().strip() == digest:
            return out_dir
        from peft import PeftModel
        from transformers import AutoModelForCausalLM, AutoTokenizer

        tmp = out_dir.with_name(out_dir.name + ".partial")
        shutil.rmtree(tmp, ignore_errors=True)
        model = AutoModelForCausalLM.from_pretrained(str(base), dtype="float32")
        merged = PeftModel.from_pretrained(model, str(adapter)).merge_and_unload()
        merged.save_pretrained(tmp, safe_serialization=True)
        AutoTokenizer.from_pretrained(str(base)).save_pretrained(tmp)
        shutil.copy(adapter / JUDGE_CARD_FILE, tmp / JUDGE_CARD_FILE)
        (tmp / COMPLETE_MARKER).write_text(digest + "\n")
        shutil.rmtree(out_dir, ignore_errors=True)
        tmp.rename(out_dir)
    return out_dir
