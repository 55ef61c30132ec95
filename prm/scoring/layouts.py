"""How each step-tag convention lays a problem and its steps out as token ids, with the tag positions.

One function per convention, chosen by the convention's name (a convention saved under another name uses
this project's layout):

* ``prm-pipeline``: ``format_prompt(tokenizer, problem)`` then each step and ``"\\n"`` through
  :func:`prm.format.encode_steps`, exactly what ``prm.training`` trains on.
* ``qwen2.5-math-prm``: the chat template with the card's system turn and the problem as the user turn, then
  each step followed by ``<extra_0>`` (the card joins steps with ``<extra_0>`` and ends with one). The tag is
  a special token, so the tokenizer cuts the text at each tag anyway and :func:`encode_steps`'s per-step
  tokenization gives the card's ids; the ``<|im_end|>`` the card appends after the last tag is left out, as
  a causal model's score at a tag never sees later tokens. A literal ``<extra_0>`` in the problem or a step
  would be cut out as one more tag token, so it is escaped (:func:`prm.format.tag_escape.escape_tag`: a WORD
  JOINER after its ``<``, which keeps it plain text) with a warning, and the PRM reads one tag per step.
* ``math-shepherd``: the card's input ``f"{problem} Step 1: ... ки\\nStep 2: ... ки"``
  (:func:`prm.export.math_shepherd.math_shepherd_text`), tokenized *whole* and read where the ids equal the
  tag's, as the card does: its SentencePiece tokenizer puts a word-boundary piece at the start of every
  separately tokenized string, so per-step tokenization would insert tokens the PRM never saw.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

from prm.export import escape_tag, math_shepherd_text
from prm.format import ContextOverflowError, EncodedSteps, StepTagConvention, encode_steps, format_prompt, tag_ids
from prm.scoring.constants import QWEN_PRM_SYSTEM_PROMPT

Layout = Callable[[Any, StepTagConvention, str, Sequence[str], "int | None"], EncodedSteps]


def pipeline_layout(tokenizer: Any, convention: StepTagConvention, problem: str, steps: Sequence[str],
                    max_length: int | None) -> EncodedSteps:
    """This project's PRMs: the policy's prompt, then every step followed by the tag."""
    return encode_steps(tokenizer, format_prompt(tokenizer, problem), steps, convention, max_length)


def qwen_prompt(tokenizer: Any, problem: str) -> str:
    """Qwen2.5-Math-PRM's conversation up to the assistant's first token."""
    if not getattr(tokenizer, "chat_template", None):
        raise ValueError("the qwen2.5-math-prm layout needs the tokenizer's chat template and this tokenizer has "
                         "none; load the PRM folder's own tokenizer (tokenizer_config.json holds the template)")
    messages = [{"role": "system", "content": QWEN_PRM_SYSTEM_PROMPT}, {"role": "user", "content": problem}]
    return tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)


def qwen_layout(tokenizer: Any, convention: StepTagConvention, problem: str, steps: Sequence[str],
                max_length: int | None) -> EncodedSteps:
    """System + user turns, then ``<step><extra_0>`` for every step in the assistant turn; a literal tag in
    the text is escaped, with a warning."""
    tag = convention.step_tag
    tagged = sum(tag in text for text in (problem, *steps))
    if tagged:
        warnings.warn(f"{tagged} of the problem and its {len(steps)} steps contain the step tag {tag!r}, which would "
                      f"read as one more tag; escaped it as {escape_tag(tag, tag)!r} (plain text) so the PRM reads one "
                      "tag per step", UserWarning, stacklevel=2)
        problem, steps = escape_tag(problem, tag), [escape_tag(step, tag) for step in steps]
    return encode_steps(tokenizer, qwen_prompt(tokenizer, problem), steps, convention, max_length)


def math_shepherd_layout(tokenizer: Any, convention: StepTagConvention, problem: str, steps: Sequence[str],
                         max_length: int | None) -> EncodedSteps:
    """The card's text tokenized whole; the tag positions are where the ids equal the tag's last id."""
    ids = list(tokenizer(math_shepherd_text(problem, steps))["input_ids"])
    tag = tag_ids(tokenizer, convention)[-1]
    positions = [i for i, token in enumerate(ids) if token == tag]
    if len(positions) != len(steps):
        raise ValueError(f"the Math-Shepherd input holds {len(positions)} tag tokens for {len(steps)} steps: the "
                         f"problem or a step contains {convention.step_tag!r}, or the tokenizer merges it with a "
                         "neighbour; remove the tag from the text")
    if max_length is not None and len(ids) > max_length:
        raise ContextOverflowError(
            f"prompt + {len(steps)} tagged steps need {len(ids)} tokens, over the PRM's context of {max_length}; "
            "shorten the steps, drop the solution, or use a PRM with a longer context")
    return EncodedSteps(ids, positions)


LAYOUTS: dict[str, Layout] = {
    "prm-pipeline": pipeline_layout,
    "qwen2.5-math-prm": qwen_layout,
    "math-shepherd": math_shepherd_layout,
}


def encode_item(tokenizer: Any, convention: StepTagConvention, problem: str, steps: Sequence[str],
                max_length: int | None) -> EncodedSteps:
    """Token ids and tag positions of one (problem, steps) under ``convention``'s layout."""
    layout = LAYOUTS.get(convention.name, pipeline_layout)
    return layout(tokenizer, convention, problem, steps, max_length)
