"""The verifiable outcome reward: the completion's final answer against the gold answer (Math-Verify)."""

from __future__ import annotations

from collections.abc import Sequence

from verifiers import extract_answer, grade_answers


def outcome_rewards(completions: Sequence[str], golds: Sequence[str | None],
                    truncated: Sequence[bool] | None = None) -> list[float | None]:
    """1.0 for a right final answer, 0.0 for a wrong one, none stated, one that cannot be graded, or a
    completion cut off by the length limit (``truncated``: an answer the model never finished is not one it
    gave); None where the gold answer is None (no outcome to compare with).

    Answers are graded in one batch through :func:`verifiers.grade_answers` (bounded in time, never raises
    on model text).

    >>> outcome_rewards(["2+2 = 4\\nAnswer: 4", "Answer: 5", "2+2 = 4", "Answer: 4", "Answer: 4"],
    ...                 ["4", "4", "4", "4", None], truncated=[False, False, False, True, False])
    [1.0, 0.0, 0.0, 0.0, None]
    """
    if len(golds) != len(completions) or (truncated is not None and len(truncated) != len(completions)):
        raise ValueError(f"{len(completions)} completions need as many gold answers (got {len(golds)}) and "
                         "truncation flags (when given)")
    cut = list(truncated) if truncated is not None else [False] * len(completions)
    todo = [i for i, (g, t) in enumerate(zip(golds, cut, strict=True)) if g is not None and not t]
    grades = grade_answers([(extract_answer(completions[i]), str(golds[i])) for i in todo]) if todo else []
    out: list[float | None] = [None if g is None else 0.0 for g in golds]
    for i, grade in zip(todo, grades, strict=True):
        out[i] = 1.0 if grade else 0.0
    return out
