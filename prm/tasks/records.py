"""The problem record every source produces and the warehouse stores."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any


def stable_id(prefix: str, *parts: str) -> str:
    """A short id that depends only on ``parts``, so re-ingesting a problem keeps its id.

    >>> stable_id("gsm8k", "How many apples?")
    'gsm8k-4acf9e5a1662'
    """
    digest = hashlib.sha1("\x1f".join(parts).encode("utf-8")).hexdigest()
    return f"{prefix}-{digest[:12]}"


@dataclass(frozen=True)
class ProblemRecord:
    """One problem, ready for the ``problems`` table."""

    problem_id: str
    task: str  # arith_chain | arith_word | gsm8k | math | logic
    split: str
    question: str
    gold_answer: str
    gold_solution: str | None = None
    n_gold_steps: int | None = None
    difficulty: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    seed: int | None = None

    def to_row(self) -> dict[str, Any]:
        return {
            "problem_id": self.problem_id,
            "task": self.task,
            "split": self.split,
            "question": self.question,
            "gold_answer": self.gold_answer,
            "gold_solution": self.gold_solution,
            "n_gold_steps": self.n_gold_steps,
            "difficulty": self.difficulty,
            "meta_json": json.dumps(self.meta, sort_keys=True) if self.meta else None,
            "seed": self.seed,
        }
