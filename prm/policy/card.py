"""The policy card: what a saved policy folder claims about itself, and the checks that hold it to it.

A card records the training config and its hash, the steps trained, why training stopped, the held-out
evaluation table and the SHA-256 of every weight file. Loading verifies the digests (a truncated or
swapped checkpoint fails loudly), and :func:`card_problems` says whether the evaluation lies in the band
the labelers need: a policy that is nearly always right gives Monte-Carlo labels with one class, one that
is nearly always wrong gives rollouts that never reach the gold answer.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from prm.policy.constants import CARD_BAND, CARD_FILE, WEIGHT_FILE_GLOBS


def read_card(model_dir: str | Path) -> dict | None:
    """The ``policy_card.json`` of a saved policy, or None when there is none."""
    path = Path(model_dir) / CARD_FILE
    return json.loads(path.read_text()) if path.is_file() else None


def weight_digests(model_dir: str | Path) -> dict[str, str]:
    """``{file name: sha256}`` of every weight file in ``model_dir``."""
    folder = Path(model_dir)
    files = sorted({p for pattern in WEIGHT_FILE_GLOBS for p in folder.glob(pattern)})
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in files}


def verify_weights(model_dir: str | Path) -> None:
    """Raise ``ValueError`` when the weight files differ from the digests the card declares.

    A folder without a card or without declared digests is not verified (a hand-made folder); a card
    whose digests do not match means a corrupted or replaced checkpoint.
    """
    card = read_card(model_dir)
    declared = (card or {}).get("weights_sha256")
    if not declared:
        return
    actual = weight_digests(model_dir)
    if actual != declared:
        raise ValueError(
            f"policy weights in {model_dir} do not match the digests in its {CARD_FILE} "
            f"(declared {sorted(declared)}, found {sorted(actual)} with other contents): the checkpoint is "
            "corrupted or was replaced; restore it with `git checkout -- <folder>` or rebuild with `make policy`"
        )


def card_problems(card: dict | None, band: dict[str, tuple[float, float]] | None = None) -> list[str]:
    """What keeps a card's held-out row at the stop rule's difficulty out of the labelers' band ([] = fine).

    >>> row = {"n_ops": 8, "answer_accuracy": 0.09, "step_error_rate": 0.94, "mixed_share": 0.3}
    >>> card = {"config": {"eval_ops": 8}, "eval": {"rows": [row]}}
    >>> [p.split(":")[0] for p in card_problems(card)]
    ['answer_accuracy', 'step_error_rate']
    >>> row.update(answer_accuracy=0.27, step_error_rate=0.136)
    >>> card_problems(card)
    []
    """
    if not card or "eval" not in card:
        return [f"no {CARD_FILE} with an evaluation table: this folder was not built by prm.policy"]
    ops = card.get("config", {}).get("eval_ops")
    rows = [r for r in card["eval"].get("rows", []) if r.get("n_ops") == ops]
    if not rows:
        return [f"the card has no evaluation row for eval_ops={ops}"]
    problems = []
    for metric, (low, high) in (band or CARD_BAND).items():
        value = rows[0].get(metric)
        if value is None or not low <= value <= high:
            problems.append(f"{metric}: {value} at {ops} steps is outside [{low}, {high}]")
    return problems


def model_card_markdown(card: dict) -> str:
    """The card as a Hugging Face style README: recipe, how training ended, weight digests, held-out table."""
    config = card["config"]
    digests = "\n".join(f"- `{name}`: sha256 `{digest}`" for name, digest in card.get("weights_sha256", {}).items())
    return f"""# arith-policy

A {card["num_parameters"]:,}-parameter char-level Llama trained from scratch by `prm.policy.build_policy` on gold
arithmetic demonstrations (styles {config["styles"]}, operators `{config["operators"]}`, operands up to
{config["max_value"]}, {config["min_ops"]}-{config["max_ops"]} steps, mix `{config["ops_mix"]}`), seed {config["seed"]}.
It exists to make labelable mistakes on long problems. Rebuild: `make policy`.

- config hash `{card["config_hash"]}` (every field in `policy_card.json`)
- {card["train_steps"]} optimizer steps of at most {config["max_steps"]}; stopped by `{card["stopped_by"]}`
- {config["torch_threads"]} torch thread(s), torch {card.get("torch_version", "?")}; {card["train_seconds"]} s on the
  build machine (time is reported, never a stop reason)
- prompt: {card["prompt_format"]}

Weights:
{digests}

Held-out problems, {card["eval"]["samples_per_problem"]} samples each at temperature {card["eval"]["temperature"]}:

{card["eval_markdown"]}
"""
