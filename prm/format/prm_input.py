"""How a PRM reads steps: the step-tag conventions and the one tokenization that training and scoring share.

A PRM scores each step at a *tag* token written right after it. Three conventions are known here:

* ``prm-pipeline`` (this project's PRMs): the step separator ``"\\n"`` after every step (TRL's
  stepwise-supervision layout); a two-class token-classification head, score = P(good) at the tag.
* ``qwen2.5-math-prm`` (Qwen2.5-Math-PRM-7B/72B): ``<extra_0>`` after every step inside the chat template;
  a two-class head, score = softmax(logits)[1] at the tag.
* ``math-shepherd`` (peiyi9979/math-shepherd-mistral-7b-prm): ``ки`` after every step; a causal LM,
  score = softmax over the logits of the ``+`` / ``-`` tokens at the tag, P(``+``).

:func:`encode_steps` builds ``input_ids`` and the tag positions for any of them: the prompt's tokens, then
for each step its own tokens followed by the tag's tokens (tokenized separately, so a tag never merges
with the step's last characters), labels read at the tag's last token.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from prm.format.steps import STEP_SEPARATOR

CONVENTION_FILE = "prm_convention.json"  # written next to a saved PRM's config.json


@dataclass(frozen=True)
class StepTagConvention:
    """Where a PRM reads its step scores and how."""

    name: str
    step_tag: str  # text appended after every step
    # The PRM kind that reads the tag, a name or alias of prm.scoring.PRM_KINDS (checked when a folder loads):
    # "token_classification" (the classifier kind): 2 logits per token (0 = bad, 1 = good); "lm_tokens": next-token
    # logits of good_token against bad_token.
    head: str
    good_token: str | None = None  # lm_tokens: the token whose probability is the score
    bad_token: str | None = None  # lm_tokens: the competing token

    def __post_init__(self) -> None:
        if not self.step_tag:
            raise ValueError("step_tag must be non-empty: the PRM reads its score at this tag")
        if not isinstance(self.head, str) or not self.head:
            raise ValueError(f"head={self.head!r} must name a PRM kind (prm.scoring.PRM_KINDS), e.g. "
                             "'token_classification'")
        if self.head == "lm_tokens" and not (self.good_token and self.bad_token):
            raise ValueError("an lm_tokens convention names its good_token and bad_token (e.g. '+' and '-')")

    def save(self, folder: str | Path) -> Path:
        """Write ``prm_convention.json`` into a model folder."""
        path = Path(folder) / CONVENTION_FILE
        path.write_text(json.dumps(asdict(self), indent=2) + "\n")
        return path

    @staticmethod
    def load(folder: str | Path) -> StepTagConvention:
        """The convention a PRM folder declares; FileNotFoundError naming the known ones when it declares none."""
        path = Path(folder) / CONVENTION_FILE
        if not path.is_file():
            raise FileNotFoundError(
                f"{folder} has no {CONVENTION_FILE}, so where to read step scores is unknown; write one with "
                f"StepTagConvention(...).save(folder), or use a known one: {sorted(CONVENTIONS)} "
                "(e.g. CONVENTIONS['math-shepherd'].save(folder))"
            )
        data: dict[str, Any] = json.loads(path.read_text())
        return StepTagConvention(**{k: data.get(k) for k in ("name", "step_tag", "head", "good_token", "bad_token")})


CONVENTIONS: dict[str, StepTagConvention] = {
    "prm-pipeline": StepTagConvention("prm-pipeline", STEP_SEPARATOR, "token_classification"),
    "qwen2.5-math-prm": StepTagConvention("qwen2.5-math-prm", "<extra_0>", "token_classification"),
    "math-shepherd": StepTagConvention("math-shepherd", "ки", "lm_tokens", good_token="+", bad_token="-"),
}


class ContextOverflowError(ValueError):
    """A prompt plus steps does not fit the PRM's context."""


@dataclass(frozen=True)
class EncodedSteps:
    """Token ids of prompt + tagged steps, and the position of each step's tag (its last token)."""

    input_ids: list[int]
    tag_positions: list[int]  # one per step, in order


def tag_ids(tokenizer: Any, convention: StepTagConvention) -> list[int]:
    """The token ids of the step tag, as training and scoring both append them."""
    ids = tokenizer(convention.step_tag, add_special_tokens=False)["input_ids"]
    if not ids:
        raise ValueError(f"the tokenizer encodes step tag {convention.step_tag!r} to no tokens; add it to its vocab")
    return list(ids)


def encode_steps(tokenizer: Any, prompt: str, steps: Sequence[str], convention: StepTagConvention,
                 max_length: int | None = None) -> EncodedSteps:
    """``prompt`` (with the tokenizer's special tokens) then each step followed by the tag.

    Raises :class:`ContextOverflowError` when the result exceeds ``max_length`` tokens, naming how many
    tokens the steps need: a PRM that silently dropped the last steps would score fewer steps than given.
    """
    ids = list(tokenizer(prompt)["input_ids"])
    tag = tag_ids(tokenizer, convention)
    positions = []
    for step in steps:
        ids += tokenizer(step, add_special_tokens=False)["input_ids"] + tag
        positions.append(len(ids) - 1)
    if max_length is not None and len(ids) > max_length:
        raise ContextOverflowError(
            f"prompt + {len(steps)} tagged steps need {len(ids)} tokens, over the PRM's context of {max_length}; "
            "shorten the steps, drop the solution, or use a PRM with a longer context"
        )
    return EncodedSteps(ids, positions)
