"""Every search method by name, with one signature."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from prm.search.config import SearchConfig
from prm.search.expand import Expander
from prm.search.sampling import best_of_n, majority_vote, weighted_vote
from prm.search.tree import beam_search, dvts
from prm.search.types import SearchResult

if TYPE_CHECKING:
    from prm.scoring import Scorer

SearchMethod = Callable[[Sequence[str], Callable[[str], str], Expander, Any, SearchConfig], list[SearchResult]]
SEARCH_METHODS: dict[str, SearchMethod] = {"beam_search": beam_search, "dvts": dvts, "best_of_n": best_of_n,
                                           "majority_vote": majority_vote, "weighted_vote": weighted_vote}


def run_search(method: str, questions: Sequence[str], prompter: Callable[[str], str], expander: Expander,
               scorer: Scorer, config: SearchConfig) -> list[SearchResult]:
    """``SEARCH_METHODS[method]`` on every question; an unknown name raises a ValueError listing the known ones."""
    if method not in SEARCH_METHODS:
        raise ValueError(f"unknown search method {method!r}; choose one of {tuple(SEARCH_METHODS)}")
    return SEARCH_METHODS[method](questions, prompter, expander, scorer, config)
