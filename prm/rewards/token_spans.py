"""Step spans (characters of a decoded response) mapped to the tokens that were generated: the one place
where a step's reward finds its token, for the process arm's advantages (:mod:`prm.rl.process_grpo`) and
verl's dense reward tensor (:mod:`prm.rewards.adapters.verl_dense`).

Offsets come from decoding the generated ids' prefixes, not from re-tokenizing the text: a BPE tokenizer need
not reproduce the ids a policy sampled, and the ids are what the loss or the reward tensor is indexed by.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import Any

Span = tuple[int, int]


def token_char_ends(tokenizer: Any, ids: Sequence[int]) -> list[int]:
    """For each token of ``ids``, how many characters the text decoded from ``ids[:i + 1]`` holds, decoded as
    TRL decodes completions (``skip_special_tokens=True``): the offsets of the generated tokens themselves,
    not of a re-tokenization of the text. Non-decreasing and at most the full text's length (a prefix cut
    inside a multi-byte character may decode a replacement character early).

    >>> from prm.policy import build_char_tokenizer
    >>> tok = build_char_tokenizer()
    >>> token_char_ends(tok, tok("1+1 = 2\\n", add_special_tokens=False).input_ids + [tok.eos_token_id])
    [1, 2, 3, 4, 5, 6, 7, 8, 8]
    """
    ids = list(ids)
    if not ids:
        return []
    texts = tokenizer.batch_decode([ids[: i + 1] for i in range(len(ids))], skip_special_tokens=True)
    total, ends, running = len(texts[-1]), [], 0
    for text in texts:
        running = min(max(running, len(text)), total)
        ends.append(running)
    return ends


def step_end_tokens(char_ends: Sequence[int], spans: Sequence[Span]) -> list[int | None]:
    """The index of the token holding each span's last character (the first token whose decoded text reaches
    the span's end); None for an empty span or one ending past the decoded text.

    >>> step_end_tokens([1, 2, 3, 4, 5, 6, 7, 8, 8], [(0, 7), (0, 9), (3, 3)])
    [6, None, None]
    """
    out: list[int | None] = []
    for start, end in spans:
        i = bisect.bisect_left(char_ends, end)
        out.append(i if end > start and i < len(char_ends) else None)
    return out
