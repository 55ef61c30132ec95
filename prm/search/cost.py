"""What PRM scoring costs a beam search, with and without the prefix cache: the workload behind
``benchmarks/scoring.py``'s search numbers.

The steps come from :class:`SyntheticExpander`, not a sampled policy: each expansion is an arithmetic step of the
policy's form (``"12+7 = 19"``), drawn from a seed and the beam's text so far, and the answer line comes exactly at
the asked depth. So a tree is exactly ``depth`` steps deep, the same tree for both scorers (their scores agree to
float rounding, so they keep the same beams), and what is timed is PRM scoring, not generation.
"""

from __future__ import annotations

import hashlib
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from prm.search.config import SearchConfig
from prm.search.expand import Expansion
from prm.search.tree import beam_search

if TYPE_CHECKING:
    from prm.scoring import Scorer

_OPS = "+-*"


class SyntheticExpander:
    """An :class:`prm.search.expand.Expander` writing arithmetic steps: ``depth`` of them, then ``Answer: N``.
    Each text depends only on the prompt, the sample's index and ``seed``; a token per character.

    >>> e = SyntheticExpander(depth=1)
    >>> first = e(["q\\n"], 2, stop=("\\n",), max_tokens=64, temperature=1.0, seed=0)[0]
    >>> [x.text.count("=") for x in first], e(["q\\n1+2 = 3\\n"], 1, stop=(), max_tokens=64, temperature=1.0,
    ...                                          seed=0)[0][0].text
    ([1, 1], 'Answer: 3')
    """

    def __init__(self, depth: int, seed: int = 0) -> None:
        if depth < 1:
            raise ValueError(f"depth={depth}: a tree needs at least one step")
        self.depth, self.seed = depth, seed

    def __call__(self, prompts: Sequence[str], n: int, *, stop: Sequence[str], max_tokens: int,
                 temperature: float, seed: int | None) -> list[list[Expansion]]:
        out = []
        for prompt in prompts:
            done = prompt.count("\n") - 1  # the prompt's own line ends with one newline
            texts = [self._step(prompt, j) if done < self.depth else self._answer(prompt) for j in range(n)]
            out.append([Expansion(t, len(t)) for t in texts])
        return out

    def _step(self, prompt: str, j: int) -> str:
        digest = hashlib.sha256(f"{self.seed}|{j}|{prompt}".encode()).digest()
        rng = random.Random(int.from_bytes(digest[:8], "big"))
        a, b, op = rng.randint(1, 99), rng.randint(1, 99), rng.choice(_OPS)
        value = a + b if op == "+" else a - b if op == "-" else a * b
        return f"{a}{op}{b} = {value}"

    @staticmethod
    def _answer(prompt: str) -> str:
        last = prompt.rstrip("\n").rsplit("\n", 1)[-1]
        return f"Answer: {last.rsplit('= ', 1)[-1]}"


@dataclass(frozen=True)
class SearchCost:
    """One beam search's PRM cost: tokens through the PRM and wall seconds, for both scorers, and how far their
    scores of the picks were apart."""

    depth: int
    full_prm_tokens: int
    incremental_prm_tokens: int
    full_wall_s: float
    incremental_wall_s: float
    same_picks: bool
    max_abs_score_diff: float


def beam_search_cost(questions: Sequence[str], prompter: Any, scorer: Scorer, depth: int, *, n: int = 4, m: int = 4,
                     repeats: int = 1, seed: int = 0) -> SearchCost:
    """Beam search ``depth`` steps deep, ``n`` beams of ``m`` expansions, over ``questions`` with full rescoring
    and with the prefix cache, interleaved ``repeats`` times (the fastest wall time of each kept, so machine load
    hits both alike)."""
    expander = SyntheticExpander(depth, seed)
    runs: dict[bool, tuple[float, list]] = {}
    for _ in range(repeats):
        for cached in (False, True):
            config = SearchConfig(n=n, m=m, max_steps=depth + 1, prefix_cache=cached, seed=seed)
            started = time.perf_counter()
            results = beam_search(questions, prompter, expander, scorer, config)
            wall = time.perf_counter() - started
            if cached not in runs or wall < runs[cached][0]:
                runs[cached] = (wall, results)
    (full_s, full), (inc_s, inc) = runs[False], runs[True]
    diffs = [abs(a - b) for f, i in zip(full, inc, strict=True) for a, b in zip(f.scores, i.scores, strict=False)]
    return SearchCost(depth, sum(r.prm_tokens for r in full), sum(r.prm_tokens for r in inc), full_s, inc_s,
                      [r.completion for r in full] == [r.completion for r in inc], max(diffs, default=0.0))
