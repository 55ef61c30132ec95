"""What every scorer shares: the convention's layout, the context check, batching by length, the context manager.

An engine (:class:`prm.scoring.scorer.PRMScorer` for transformers, :class:`prm.scoring.vllm_scorer.VLLMScorer`
for vLLM) implements :meth:`StepScorer._forward` over already encoded items; everything before it (token ids,
tag positions, overflow errors naming the item) is computed here, once, the same way for both, so the two
engines read the PRM at the same tokens. An LM-head PRM
(:class:`prm.scoring.implicit_scorer.ImplicitPRMScorer`) reads no step tags: it overrides :meth:`encode` and
:meth:`score_batch` and keeps the rest (the context check naming the item, :meth:`score_steps`, :meth:`close`,
``with``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from prm.format import ContextOverflowError, EncodedSteps, StepTagConvention
from prm.scoring.config import ScorerConfig
from prm.scoring.constants import NO_TOKENIZER_LIMIT
from prm.scoring.layouts import encode_item


class StepScorer:
    """A loaded PRM: :meth:`score_steps` for one solution, :meth:`score_batch` for many.

    ``default_batch`` is the engine's items per :meth:`_forward` call when ``config.batch_size`` is None
    (None: all items in one call).
    """

    engine = "base"
    default_batch: int | None = None

    def __init__(self, tokenizer: Any, convention: StepTagConvention | None, config: ScorerConfig,
                 folder: str | Path | None, max_length: int | None) -> None:
        """``convention`` is None for a PRM that reads no step tags (an LM-head PRM)."""
        self.tokenizer, self.convention, self.config = tokenizer, convention, config
        self.folder = Path(folder) if folder is not None else None
        self.max_length = max_length

    def encode(self, problem: str, steps: Sequence[str]) -> Any:
        """The ids the PRM reads and the positions of the step tags (raises ContextOverflowError)."""
        if self.convention is None:
            raise TypeError(f"{type(self).__name__} has no step-tag convention; it must override encode")
        return encode_item(self.tokenizer, self.convention, problem, steps, self.max_length)

    def encode_items(self, items: Sequence[tuple[str, Sequence[str]]]) -> list[Any | None]:
        """:meth:`encode` of every item with steps (None for an item without), in order.

        Raises :class:`ContextOverflowError` naming the item when one does not fit the context.
        """
        encoded: list[Any | None] = []
        for i, (problem, steps) in enumerate(items):
            if not steps:
                encoded.append(None)
                continue
            try:
                encoded.append(self.encode(problem, list(steps)))
            except ContextOverflowError as err:
                raise ContextOverflowError(f"item {i} (problem {problem[:40]!r}): {err}") from None
        return encoded

    def score_steps(self, problem: str, steps: Sequence[str]) -> list[float]:
        """P(step is good) for every step, in order; ``[]`` for no steps."""
        return self.score_batch([(problem, steps)], batch_size=1)[0]

    def score_batch(self, items: Sequence[tuple[str, Sequence[str]]],
                    batch_size: int | None = None) -> list[list[float]]:
        """:meth:`score_steps` of every ``(problem, steps)``, in order, in batches of similar length.

        Raises :class:`ContextOverflowError` naming the item when one does not fit the context.
        """
        encoded: list[EncodedSteps | None] = self.encode_items(items)
        scores: list[list[float]] = [[] for _ in items]
        # Longest first, so each batch pads to a similar length and an out-of-memory error shows up at once.
        order = sorted((i for i, e in enumerate(encoded) if e is not None), key=lambda i: -len(encoded[i].input_ids))
        size = batch_size or self.config.batch_size or self.default_batch or max(len(order), 1)
        for start in range(0, len(order), size):
            chunk = order[start : start + size]
            for i, row in zip(chunk, self._forward([encoded[i] for i in chunk]), strict=True):
                scores[i] = row
        return scores

    def _forward(self, batch: list[EncodedSteps]) -> list[list[float]]:
        """P(good) at every tag of every item of ``batch``, in order."""
        raise NotImplementedError

    def close(self) -> None:
        """Release the engine (a worker process for vLLM); the transformers engine holds nothing to release."""

    def __enter__(self) -> StepScorer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def context_of(model_config: Any, tokenizer: Any) -> int | None:
    """Tokens the PRM reads: the smallest of the model's position limit and the tokenizer's own limit.

    ``model_config`` is a config.json mapping or a transformers config object.

    >>> class Tok:
    ...     model_max_length = 10**30  # transformers' "no limit"
    >>> context_of({"max_position_embeddings": 1024}, Tok()), context_of({}, Tok())
    (1024, None)
    """
    def get(name: str) -> Any:
        return model_config.get(name) if isinstance(model_config, Mapping) else getattr(model_config, name, None)

    limits = [get(name) for name in ("max_position_embeddings", "n_positions")]
    limits.append(getattr(tokenizer, "model_max_length", None))
    real = [int(x) for x in limits if isinstance(x, int) and 0 < x < NO_TOKENIZER_LIMIT]
    return min(real) if real else None


def candidate_ids(tokenizer: Any, convention: StepTagConvention) -> list[int]:
    """[good id, bad id] of an ``lm_tokens`` PRM: each mark alone, which for Math-Shepherd's SentencePiece
    tokenizer gives the card's ``tokenizer.encode("+ -")[1:]`` (each piece carries its word-boundary marker
    either way)."""
    ids = []
    for token in (convention.good_token, convention.bad_token):
        found = tokenizer(token, add_special_tokens=False)["input_ids"]
        if len(found) != 1:
            raise ValueError(f"the tokenizer encodes {token!r} to {len(found)} tokens; an lm_tokens PRM reads one "
                             "logit per mark, so both marks must be single tokens of its vocabulary")
        ids.append(found[0])
    return ids
